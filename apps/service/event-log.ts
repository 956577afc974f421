// The events of one build kept for replay (SSE Last-Event-ID resume, late subscribers with
// afterSeq). Bounded: only the latest step of each open phase is kept (the protocol allows steps
// to be coalesced), and past `max` the oldest events go. `droppedThrough` says how far that went:
// a subscriber who resumes from before it cannot be replayed without a gap, so it is reset with
// the build view's snapshot instead (build-feed.ts).
import type { BuildEvent } from '../shared/protocol.js';

type StepEvent = Extract<BuildEvent, { type: 'phase.step' }>;

export class EventLog {
  private events: BuildEvent[] = [];
  /** Steps replaced by a later step of the same phase: skipped on replay, removed on compaction. */
  private superseded = new Set<BuildEvent>();
  /** Phase id → its latest kept step, while the phase is open. */
  private latestStep = new Map<number, StepEvent>();
  /** Highest seq that was dropped for space (not coalesced); -1 if none. */
  droppedThrough = -1;

  constructor(private readonly max: number) {}

  append(ev: BuildEvent): void {
    if (ev.type === 'phase.step') {
      const prev = this.latestStep.get(ev.id);
      if (prev) this.superseded.add(prev);
      this.latestStep.set(ev.id, ev);
    } else if (ev.type === 'phase.finish') {
      this.latestStep.delete(ev.id);
    }
    this.events.push(ev);
    // Compaction is O(kept): run it only when it frees a good share (amortized O(1) per event),
    // and leave headroom when trimming so it does not run again at the next append.
    if (this.events.length > this.max) this.compact(Math.floor(this.max * 0.75));
    else if (this.superseded.size > Math.max(1024, this.events.length >> 1)) this.compact(this.max);
  }

  /** Kept events with seq > afterSeq, in seq order. */
  after(afterSeq: number): BuildEvent[] {
    const out: BuildEvent[] = [];
    for (const e of this.events) if (e.seq > afterSeq && !this.superseded.has(e)) out.push(e);
    return out;
  }

  get size(): number {
    return this.events.length - this.superseded.size;
  }

  private compact(keep: number): void {
    let kept = this.superseded.size ? this.events.filter((e) => !this.superseded.has(e)) : this.events;
    this.superseded.clear();
    if (kept.length > keep) {
      const drop = kept.length - keep;
      this.droppedThrough = kept[drop - 1].seq;
      kept = kept.slice(drop);
    }
    this.events = kept;
  }
}
