// The client side of the stream contract (docs/http-api.md, "Event streams"), written once for
// every surface that follows a build: the web client over SSE, and any in-process subscriber
// (Electron hub, MCP, CLI, LSP) over BuildServiceApi.subscribe.
//
// What arrives: the build's record, a complete view snapshot (on connect, and again as a reset
// whenever the client must start over), and batches of events. What the cursor guarantees to
// its sink, whatever the order of arrival:
// - snapshot first: events that arrive before the first snapshot are held, then those newer
//   than the snapshot are applied after it (an in-process subscription can deliver before
//   subscribe() has returned its snapshot);
// - no event twice and none out of order: anything at or below the last seq applied is dropped
//   (replays overlap live delivery at a reconnect);
// - a reset replaces the sink's state (applySnapshot with the view) and moves the seq to the
//   view's, so events continue it; a reset older than what the sink has is ignored;
// - where to resume: `resumeAfter` is the Last-Event-ID / afterSeq to reconnect with.
// Pure: no I/O, no timers, no zod (the web page cannot load it; the service validated what it sent).
import type { BuildViewSnapshot } from './build-view.js';
import type { BuildEvent, BuildRecord } from './protocol.js';

export interface StreamSink {
  /**
   * Start over from this state. `view` is complete when given (rebuild with
   * BuildView.fromSnapshot); without one (a host that has no view) only the record is known.
   */
  applySnapshot(record: BuildRecord | undefined, view: BuildViewSnapshot | undefined): void;
  /** Events that continue the state, in seq order, each once. */
  applyEvents(events: BuildEvent[]): void;
  /** A newer record while the state stands (a resume inside the kept window): facts only. */
  applyRecord?(record: BuildRecord): void;
}

export class StreamCursor {
  /** Highest seq the sink has (from a snapshot or an event); -1 before anything. */
  lastSeq = -1;
  /** The latest record seen. */
  record?: BuildRecord;
  /** The build has ended (build.finished applied, or a snapshot of a finished build). */
  finished = false;
  private based = false;
  private held: BuildEvent[] = [];

  constructor(private readonly sink: StreamSink) {}

  /** True once a snapshot was applied: events are applied directly from then on. */
  get hasState(): boolean {
    return this.based;
  }

  /**
   * What to resume after when reconnecting (SSE Last-Event-ID, subscribe's afterSeq); undefined
   * before the first snapshot (then connect fresh: the service sends one).
   */
  get resumeAfter(): number | undefined {
    return this.based ? this.lastSeq : undefined;
  }

  /**
   * The build's record (SSE `event: snapshot`). Remembered for the next reset; handed to the
   * sink as an update when a state already stands. It never starts a state by itself unless
   * `baseIfNone`: a host without views (only records) then starts from it.
   */
  noteRecord(record: BuildRecord, baseIfNone = false): void {
    this.record = record;
    if (this.based) {
      this.sink.applyRecord?.(record);
      if (record.outcome) this.finished = true;
    } else if (baseIfNone) {
      this.start(record.lastSeq, record, undefined);
      if (record.outcome) this.finished = true;
    }
  }

  /** A complete view: the sink starts over from it (SSE `event: reset`, a fresh subscription). */
  reset(view: BuildViewSnapshot, record?: BuildRecord): void {
    if (record) this.record = record;
    // An older snapshot than what the sink has would move it backwards.
    if (this.based && view.seq < this.lastSeq) return;
    this.start(view.seq, this.record, view);
    if (view.outcome) this.finished = true;
  }

  /**
   * The sink starts with nothing (seq -1) and wants every event from the first: a client that
   * resumes after -1 (SSE `Last-Event-ID: -1`) gets the whole kept stream, or a reset when the
   * first events are no longer kept. The sink is not called: its fresh state is the empty one.
   */
  startEmpty(): void {
    if (this.based) return;
    this.based = true;
    this.lastSeq = -1;
    const held = this.held;
    this.held = [];
    if (held.length > 0) this.apply(held);
  }

  /** An in-process subscription's snapshot: the record plus, when the host has one, the view. */
  snapshot(record: BuildRecord, view?: BuildViewSnapshot): void {
    if (view) this.reset(view, record);
    else this.noteRecord(record, true);
  }

  /** A batch of events, any order of arrival relative to the snapshot. */
  events(events: readonly BuildEvent[]): void {
    if (!this.based) {
      this.held.push(...events);
      return;
    }
    this.apply(events);
  }

  private start(seq: number, record: BuildRecord | undefined, view: BuildViewSnapshot | undefined): void {
    this.based = true;
    this.lastSeq = seq;
    this.sink.applySnapshot(record, view);
    const held = this.held;
    this.held = [];
    if (held.length > 0) this.apply(held);
  }

  private apply(events: readonly BuildEvent[]): void {
    const fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (ev.seq <= this.lastSeq) continue;
      this.lastSeq = ev.seq;
      fresh.push(ev);
      if (ev.type === 'build.finished') this.finished = true;
    }
    if (fresh.length > 0) this.sink.applyEvents(fresh);
  }
}
