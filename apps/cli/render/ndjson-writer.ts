// NDJSON onto a stream whose reader may be slow (`build --json | slow-reader`) or gone (`| head`).
//
// While the stream accepts data, every event is written as it comes. Once write() returns false
// the reader is behind: lines wait here, already serialized (a string is far smaller than the
// event object), and steps are coalesced — a newer step of a phase replaces the older one still
// waiting, and likewise for heartbeats — so a stalled reader costs memory only for the events
// the protocol never drops (starts, finishes, logs, cache stats, cancelling, finished). The
// waiting lines go out in chunks on each 'drain'. A closed reader (EPIPE) ends the writing
// quietly; the owner hears of it through onClosed.
import type { BuildEvent } from '../../shared/protocol.js';

/** Size of one write while catching up: big enough to be cheap, small enough to keep coalescing. */
const CHUNK_BYTES = 64 * 1024;

export class NdjsonWriter {
  /** Serialized lines waiting for the reader; null marks a step superseded by a later one. */
  private queue: Array<string | null> = [];
  private head = 0;
  /** Phase id → index in `queue` of its waiting step. */
  private stepAt = new Map<number, number>();
  private heartbeatAt = -1;
  private waitingForDrain = false;
  /** Chunks handed to the stream whose write callback has not run yet. */
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private closedErr: NodeJS.ErrnoException | undefined;
  /** Events coalesced away (steps and heartbeats replaced by later ones) while the reader lagged. */
  coalesced = 0;
  /** Most lines that waited at once: what a stalled reader cost in memory. */
  peakQueued = 0;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly onClosed: (err: NodeJS.ErrnoException) => void = () => {},
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
      for (const e of events) chunk += JSON.stringify(e) + '\n';
      this.send(chunk);
      return;
    }
    for (const e of events) this.enqueue(e);
  }

  /** Resolves once every line has been handed to the OS (or the reader is gone). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.closed || (this.inFlight === 0 && this.head === this.queue.length && !this.waitingForDrain);
  }

  private enqueue(e: BuildEvent): void {
    const line = JSON.stringify(e) + '\n';
    if (e.type === 'phase.step') {
      const prev = this.stepAt.get(e.id);
      if (prev !== undefined && prev >= this.head) {
        this.queue[prev] = null;
        this.coalesced++;
      }
      this.stepAt.set(e.id, this.queue.length);
    } else if (e.type === 'heartbeat') {
      if (this.heartbeatAt >= this.head) {
        this.queue[this.heartbeatAt] = null;
        this.coalesced++;
      }
      this.heartbeatAt = this.queue.length;
    } else if (e.type === 'phase.finish') {
      // Its last step (if waiting) stays where it is, before the finish; no later step can come.
      this.stepAt.delete(e.id);
    }
    // Appending (never replacing in place) keeps seq rising in the output.
    this.queue.push(line);
    const waiting = this.queue.length - this.head;
    if (waiting > this.peakQueued) this.peakQueued = waiting;
  }

  private send(chunk: string): void {
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

  private onDrain(): void {
    this.waitingForDrain = false;
    while (!this.closed && !this.waitingForDrain && this.head < this.queue.length) {
      let chunk = '';
      while (this.head < this.queue.length && chunk.length < CHUNK_BYTES) {
        const line = this.queue[this.head++];
        if (line !== null) chunk += line;
      }
      if (chunk) this.send(chunk);
    }
    if (this.head === this.queue.length) {
      // Caught up: drop the consumed prefix and every index into it.
      this.queue = [];
      this.head = 0;
      this.stepAt.clear();
      this.heartbeatAt = -1;
    } else if (this.head > 65536 && this.head * 2 > this.queue.length) {
      this.compact();
    }
    this.settleIdle();
  }

  /** Drops the written prefix of the queue, shifting the step indexes with it. */
  private compact(): void {
    const shift = this.head;
    this.queue = this.queue.slice(shift);
    this.head = 0;
    for (const [id, i] of this.stepAt) {
      if (i < shift) this.stepAt.delete(id);
      else this.stepAt.set(id, i - shift);
    }
    this.heartbeatAt = this.heartbeatAt >= shift ? this.heartbeatAt - shift : -1;
  }

  private close(err: NodeJS.ErrnoException): void {
    if (this.closedErr) return;
    this.closedErr = err;
    this.queue = [];
    this.head = 0;
    this.stepAt.clear();
    this.settleIdle();
    this.onClosed(err);
  }

  private settleIdle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
