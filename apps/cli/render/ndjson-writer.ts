// NDJSON onto a stream whose reader may be slow (`build --json | slow-reader`) or gone (`| head`).
//
// While the stream accepts data, every event is written as it comes. Once write() returns false
// the reader is behind, and lines wait here until 'drain':
//   - steps are coalesced: a newer step of a phase replaces the waiting one, and a phase.finish
//     (which carries stepsDone) replaces its phase's waiting step; only the latest heartbeat is
//     kept. Steps wait in a small map (at most one per open phase), each anchored at the position
//     in the output where it belongs, so seq still rises in what the reader gets;
//   - every other event (starts, finishes, logs, cache stats, cancelling, finished — never
//     dropped) is serialized at once into large byte buffers outside the JS heap: a stalled
//     reader costs about the size of those lines, not the size of event objects plus the
//     garbage collector's headroom.
// A closed reader (EPIPE) ends the writing quietly; the owner hears of it through onClosed.
//
// Bounded by design: past `highWaterBytes` of waiting lines, room() returns a promise that
// settles once the reader has taken them down to half that. The build command returns it from
// its subscription, so the service holds the worker's next batch (explicit back-pressure to the
// worker: steps coalesce there) instead of this process storing a stalled reader's whole stream.
import type { BuildEvent } from '../../shared/protocol.js';
import { eventJson } from '../../shared/event-json.js';

/** Size of one write while catching up: big enough to be cheap, small enough to keep coalescing. */
const WRITE_BYTES = 64 * 1024;
/** Size of one storage buffer for waiting lines. */
const STORE_BYTES = 1024 * 1024;
/** Waiting bytes past which the writer asks for back-pressure (room() returns a promise). */
export const NDJSON_HIGH_WATER_BYTES = 4 * 1024 * 1024;

interface Stored {
  buf: Buffer;
  used: number;
  /** Output position (bytes of waiting lines since the writer started) of buf[0]. */
  start: number;
}

interface WaitingStep {
  line: string;
  /** Output position the line goes before: everything stored before it was enqueued. */
  at: number;
  seq: number;
}

export class NdjsonWriter {
  private store: Stored[] = [];
  /** Output position up to which stored bytes were handed to the stream. */
  private readPos = 0;
  /** Output position after the last stored byte. */
  private writePos = 0;
  /** Phase id → its waiting step; key -1 holds the waiting heartbeat. */
  private steps = new Map<number, WaitingStep>();
  private waitingForDrain = false;
  /** Chunks handed to the stream whose write callback has not run yet. */
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private closedErr: NodeJS.ErrnoException | undefined;
  /** Steps and heartbeats coalesced away while the reader lagged. */
  coalesced = 0;
  /** Most bytes that waited at once: what a stalled reader cost in memory. */
  peakWaitingBytes = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly onClosed: (err: NodeJS.ErrnoException) => void = () => {},
    readonly highWaterBytes = NDJSON_HIGH_WATER_BYTES,
  ) {
    out.on('error', (err: NodeJS.ErrnoException) => this.close(err));
  }

  /** True once the reader went away (EPIPE and the like). */
  get closed(): boolean {
    return this.closedErr !== undefined;
  }

  write(events: readonly BuildEvent[]): void {
    if (this.closed || events.length === 0) return;
    if (!this.waitingForDrain) {
      let chunk = '';
      for (const e of events) chunk += eventJson(e) + '\n';
      this.send(chunk);
      return;
    }
    for (const e of events) this.enqueue(e);
    const waiting = this.writePos - this.readPos;
    if (waiting > this.peakWaitingBytes) this.peakWaitingBytes = waiting;
  }

  /** Bytes of lines waiting for the reader (stored lines and waiting steps). */
  get waitingBytes(): number {
    let steps = 0;
    for (const st of this.steps.values()) steps += st.line.length;
    return this.writePos - this.readPos + steps;
  }

  /**
   * Undefined while fewer than highWaterBytes wait; otherwise a promise that settles once the
   * reader has taken them down to half (or is gone). The producer sends nothing more until then.
   */
  room(): Promise<void> | undefined {
    if (this.closed || this.writePos - this.readPos < this.highWaterBytes) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private settleRoom(): void {
    if (this.roomWaiters.length === 0) return;
    if (!this.closed && this.writePos - this.readPos > this.highWaterBytes / 2) return;
    for (const w of this.roomWaiters.splice(0)) w();
  }

  /** Resolves once every line has been handed to the OS (or the reader is gone). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Everything handed to write() is with the OS now (nothing waits here or in the stream's own
   * buffer), so a line written to the file descriptor directly lands after all of it, whole.
   */
  get caughtUp(): boolean {
    const buffered = (this.out as { writableLength?: number }).writableLength ?? 0;
    return !this.closed && this.nothingWaiting() && buffered === 0;
  }

  private isIdle(): boolean {
    return this.closed || (this.inFlight === 0 && this.nothingWaiting());
  }

  /** No line waits here for the reader (none stored, no step, no drain awaited). */
  private nothingWaiting(): boolean {
    return !this.waitingForDrain && this.readPos === this.writePos && this.steps.size === 0;
  }

  private enqueue(e: BuildEvent): void {
    if (e.type === 'phase.step' || e.type === 'heartbeat') {
      const key = e.type === 'heartbeat' ? -1 : e.id;
      if (this.steps.delete(key)) this.coalesced++;
      // Re-inserted, so the map stays in enqueue (= seq) order.
      this.steps.set(key, { line: eventJson(e) + '\n', at: this.writePos, seq: e.seq });
      return;
    }
    if (e.type === 'phase.finish' && this.steps.delete(e.id)) this.coalesced++;
    this.storeLine(eventJson(e) + '\n');
  }

  private storeLine(line: string): void {
    const bytes = Buffer.byteLength(line);
    let last = this.store[this.store.length - 1];
    if (!last || last.used + bytes > last.buf.length) {
      last = { buf: Buffer.allocUnsafeSlow(Math.max(STORE_BYTES, bytes)), used: 0, start: this.writePos };
      this.store.push(last);
    }
    last.buf.write(line, last.used, 'utf8');
    last.used += bytes;
    this.writePos += bytes;
  }

  private send(chunk: string | Buffer): void {
    this.inFlight++;
    const ok = this.out.write(chunk, () => {
      this.inFlight--;
      this.settleIdle();
    });
    if (!ok && !this.waitingForDrain) {
      this.waitingForDrain = true;
      this.out.once('drain', () => this.onDrain());
    }
  }

  /** Stored bytes in [from, to) as buffers (views, no copy), releasing fully read storage. */
  private take(from: number, to: number): Buffer[] {
    const parts: Buffer[] = [];
    for (const s of this.store) {
      const a = Math.max(from, s.start);
      const b = Math.min(to, s.start + s.used);
      if (a < b) parts.push(s.buf.subarray(a - s.start, b - s.start));
      if (s.start >= to) break;
    }
    while (this.store.length > 0 && this.store[0].start + this.store[0].used <= to && this.store[0] !== this.store[this.store.length - 1]) {
      this.store.shift();
    }
    return parts;
  }

  private onDrain(): void {
    this.waitingForDrain = false;
    while (!this.closed && !this.waitingForDrain && (this.readPos < this.writePos || this.steps.size > 0)) {
      // Steps due at the current position go first, in seq order (the map's order).
      const due: WaitingStep[] = [];
      let nextAt = Infinity;
      for (const [key, st] of this.steps) {
        if (st.at <= this.readPos) {
          due.push(st);
          this.steps.delete(key);
        } else if (st.at < nextAt) {
          nextAt = st.at;
        }
      }
      due.sort((x, y) => x.seq - y.seq);
      const end = Math.min(this.writePos, this.readPos + WRITE_BYTES, nextAt);
      const parts: Buffer[] = due.map((st) => Buffer.from(st.line, 'utf8'));
      if (end > this.readPos) parts.push(...this.take(this.readPos, end));
      this.readPos = end;
      if (parts.length > 0) this.send(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    }
    // Caught up: let the storage go (writes still in flight hold their own views of it).
    if (this.readPos === this.writePos) this.store = [];
    this.settleRoom();
    this.settleIdle();
  }

  private close(err: NodeJS.ErrnoException): void {
    if (this.closedErr) return;
    this.closedErr = err;
    this.store = [];
    this.steps.clear();
    this.readPos = this.writePos;
    this.settleRoom();
    this.settleIdle();
    this.onClosed(err);
  }

  private settleIdle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
