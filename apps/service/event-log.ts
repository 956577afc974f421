// The events of one build kept for replay (SSE Last-Event-ID resume, late subscribers with
// afterSeq). Bounded: only the latest step of each phase is kept (the protocol allows steps to be
// coalesced), and past `max` the oldest events go; a subscriber who resumes from before the
// oldest kept event still gets the snapshot, which is always complete.
import type { BuildEvent } from '../shared/protocol.js';

export class EventLog {
  private events: Array<BuildEvent | undefined> = [];
  private holes = 0;
  /** Phase id → index of its latest kept step, while the phase is open. */
  private latestStep = new Map<number, number>();
  /** Highest seq that was dropped for space (not coalesced); 0 if none. */
  droppedThrough = 0;

  constructor(private readonly max: number) {}

  append(ev: BuildEvent): void {
    if (ev.type === 'phase.step') {
      const prev = this.latestStep.get(ev.id);
      if (prev !== undefined) {
        this.events[prev] = undefined;
        this.holes++;
      }
      this.latestStep.set(ev.id, this.events.length);
    } else if (ev.type === 'phase.finish') {
      this.latestStep.delete(ev.id);
    }
    this.events.push(ev);
    // Compaction is O(kept): run it only when it frees a good share (amortized O(1) per event).
    if (this.events.length > this.max || this.holes > Math.max(1024, this.events.length >> 1)) this.compact();
  }

  /** Kept events with seq > afterSeq, in seq order. */
  after(afterSeq: number): BuildEvent[] {
    const out: BuildEvent[] = [];
    for (const e of this.events) if (e && e.seq > afterSeq) out.push(e);
    return out;
  }

  get size(): number {
    return this.events.length - this.holes;
  }

  private compact(): void {
    let kept = this.events.filter((e): e is BuildEvent => e !== undefined);
    if (kept.length > this.max) {
      // Drop a quarter at once so compaction stays rare under a steady stream.
      const drop = kept.length - Math.floor(this.max * 0.75);
      this.droppedThrough = kept[drop - 1].seq;
      kept = kept.slice(drop);
    }
    this.events = kept;
    this.holes = 0;
    this.latestStep.clear();
    kept.forEach((e, i) => {
      if (e.type === 'phase.step') this.latestStep.set(e.id, i);
    });
  }
}
