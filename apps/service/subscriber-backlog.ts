// Events waiting for one subscriber that is busy (its callback returned a promise that has not
// settled: an SSE socket waiting for 'drain', a slow IPC peer). Steps are coalesced while they
// wait: a newer step of a phase replaces the waiting one, a phase.finish (which carries
// stepsDone) replaces its phase's waiting step, and only the latest heartbeat is kept. Every
// other event is kept, so `size` counts what a stalled subscriber really costs, and `bytes` what
// that is in memory (apps/shared/event-bytes.ts's estimate).
import { eventBytes } from '../shared/event-bytes.js';
import type { BuildEvent } from '../shared/protocol.js';

export class SubscriberBacklog {
  private events: Array<BuildEvent | null> = [];
  private stepAt = new Map<number, number>();
  private heartbeatAt = -1;
  private live = 0;
  private liveBytes = 0;
  coalesced = 0;

  get size(): number {
    return this.live;
  }

  get bytes(): number {
    return this.liveBytes;
  }

  push(events: readonly BuildEvent[]): void {
    for (const e of events) {
      if (e.type === 'phase.step' || e.type === 'phase.finish') {
        const prev = this.stepAt.get(e.id);
        if (prev !== undefined) this.drop(prev);
        if (e.type === 'phase.step') this.stepAt.set(e.id, this.events.length);
        else this.stepAt.delete(e.id);
      } else if (e.type === 'heartbeat') {
        if (this.heartbeatAt >= 0) this.drop(this.heartbeatAt);
        this.heartbeatAt = this.events.length;
      }
      this.events.push(e);
      this.live++;
      this.liveBytes += eventBytes(e);
    }
  }

  /** Everything waiting, in seq order; the backlog is empty afterwards. */
  take(): BuildEvent[] {
    const out = this.events.filter((e): e is BuildEvent => e !== null);
    this.clear();
    return out;
  }

  clear(): void {
    this.events = [];
    this.stepAt.clear();
    this.heartbeatAt = -1;
    this.live = 0;
    this.liveBytes = 0;
  }

  private drop(i: number): void {
    const e = this.events[i];
    if (!e) return;
    this.liveBytes -= eventBytes(e);
    this.events[i] = null;
    this.live--;
    this.coalesced++;
  }
}
