// The worker's hop of the event stream: the shared pacing policy (apps/shared/pacing-batcher.ts)
// with back-pressure from the IPC channel. The native flusher already paces by the same budget,
// so a batch from the addon normally goes straight out; when the host reads slowly, sendBatch's
// promise holds the next message back and steps coalesce here instead of piling up in the
// channel's write queue.
import { PACING_BUDGET_MS, PACING_MAX_EVENTS, PacingBatcher } from '../shared/pacing-batcher.js';

export const BATCH_INTERVAL_MS = PACING_BUDGET_MS;
export const BATCH_MAX_EVENTS = PACING_MAX_EVENTS;

export class IpcBatcher extends PacingBatcher {}
