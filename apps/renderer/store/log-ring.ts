// Build logs kept in a fixed-size ring: a verbose build can log millions of lines, and the page
// must not grow without bound. The oldest lines are dropped and counted.
import type { Severity } from '../../shared/protocol.js';

export interface LogLine {
  seq: number;
  t: number;
  severity: Severity;
  message: string;
}

export class LogRing {
  private buf: (LogLine | undefined)[];
  private head = 0;
  size = 0;
  dropped = 0;
  /** Bumped on every push, so views know when to re-filter. */
  rev = 0;

  constructor(readonly capacity = 20_000) {
    this.buf = new Array(capacity);
  }

  push(line: LogLine): void {
    this.buf[(this.head + this.size) % this.capacity] = line;
    if (this.size < this.capacity) this.size++;
    else {
      this.head = (this.head + 1) % this.capacity;
      this.dropped++;
    }
    this.rev++;
  }

  at(i: number): LogLine {
    return this.buf[(this.head + i) % this.capacity]!;
  }

  toArray(): LogLine[] {
    const out: LogLine[] = new Array(this.size);
    for (let i = 0; i < this.size; i++) out[i] = this.at(i);
    return out;
  }

  clear(): void {
    this.buf = new Array(this.capacity);
    this.head = 0;
    this.size = 0;
    this.dropped = 0;
    this.rev++;
  }
}
