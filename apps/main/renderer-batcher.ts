// Electron main's hop: events of one renderer subscription, paced by the shared policy
// (apps/shared/pacing-batcher.ts). The simulated backend can deliver 100k+ callbacks a second; one
// IPC message per event would saturate the renderer's IPC queue long before React paints, so
// messages go at most once per budget. A due batch still waits for a zero-delay timer: events
// pushed synchronously with a snapshot must reach the renderer after it.
//
// `deliver` returns a promise that settles when the page acknowledges the batch
// (subscription-hub.ts): nothing more is sent until then, and what arrives meanwhile waits here,
// coalesced (and, upstream, in the service's bounded subscriber backlog).
import { PACING_BUDGET_MS, PacingBatcher, type PacingTimers, type SendBatch } from '../shared/pacing-batcher.js';

export type BatcherTimers = PacingTimers;

export const FRAME_MS = PACING_BUDGET_MS;

export class RendererBatcher extends PacingBatcher {
  constructor(deliver: SendBatch, intervalMs = FRAME_MS, timers?: BatcherTimers) {
    // No per-message cap: the renderer takes one message per budget however big the burst (the
    // burst itself is bounded upstream: the service drops a subscriber whose backlog passes its
    // byte bound).
    super(deliver, { budgetMs: intervalMs, maxEvents: Infinity, timers, leadingEdge: 'next-tick' });
  }
}
