// The worker's hop of the event stream: the shared pacing policy (apps/shared/pacing-batcher.ts)
// with back-pressure from the IPC channel. The native flusher already paces by the same budget,
// so a batch from the addon normally goes straight out; when the host is behind (it acks a batch
// only once whoever paces the build has room), sendBatch's promise holds the next message back
// and steps coalesce here instead of piling up in the channel's write queue; past a bound the
// worker holds the native layer too (worker.ts).
// Its events are the wire form (apps/shared/event-lines.ts): the hot ones arrive from the addon
// as their JSON text already and coalesce by the type and phase id they carry.
import type { WireEvent } from '../shared/event-lines.js';
import { PACING_BUDGET_MS, PACING_MAX_EVENTS, PacingBatcher } from '../shared/pacing-batcher.js';

export const BATCH_INTERVAL_MS = PACING_BUDGET_MS;
export const BATCH_MAX_EVENTS = PACING_MAX_EVENTS;

export class IpcBatcher extends PacingBatcher<WireEvent> {}
