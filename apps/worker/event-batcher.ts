// Batches events on their way to the host: one IPC message per ~16 ms (a frame) or per 500
// events, whichever comes first. The first event after a quiet spell goes out at once, so a
// heartbeat or a phase start after a long silent stretch is not held back by the timer.
import type { BuildEvent } from '../shared/protocol.js';

export const BATCH_INTERVAL_MS = 16;
export const BATCH_MAX_EVENTS = 500;

export class EventBatcher {
  private pending: BuildEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = 0;

  constructor(private readonly sendBatch: (events: BuildEvent[]) => void) {}

  push(events: readonly BuildEvent[]): void {
    for (const e of events) {
      this.pending.push(e);
      if (this.pending.length >= BATCH_MAX_EVENTS) this.flush();
    }
    if (this.pending.length === 0 || this.timer) return;
    const wait = this.lastFlush + BATCH_INTERVAL_MS - Date.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.lastFlush = Date.now();
    this.sendBatch(batch);
  }
}
