// Electron main's hop: events of one renderer subscription, paced by the shared policy
// (apps/shared/pacing-batcher.ts). The simulated backend can deliver 100k+ callbacks a second; one
// IPC message per event would saturate the renderer's IPC queue long before React paints, so
// messages go at most once per budget. A due batch still waits for a zero-delay timer: events
// pushed synchronously with a snapshot must reach the renderer after it.
import type { BuildEvent } from '../shared/protocol.js';
import { PACING_BUDGET_MS, PacingBatcher, type PacingTimers } from '../shared/pacing-batcher.js';

export type BatcherTimers = PacingTimers;

export const FRAME_MS = PACING_BUDGET_MS;

export class RendererBatcher extends PacingBatcher {
  constructor(deliver: (events: BuildEvent[]) => void, intervalMs = FRAME_MS, timers?: BatcherTimers) {
    // No per-message cap: the renderer takes one message per budget however big the burst.
    super(deliver, { budgetMs: intervalMs, maxEvents: Infinity, timers, leadingEdge: 'next-tick' });
  }
}
