// The last lines of a build's log, kept in the build view so that a surface that joins late (a
// past build picked from the history, a page reloaded mid-build, a stream reset) shows the log's
// end instead of an empty panel. Bounded in lines and in characters per line: a verbose
// TensorRT build logs millions of lines, and the view travels in every snapshot.
import type { Severity } from './protocol.js';

/** Lines a view keeps. */
export const VIEW_LOG_LINES = 500;
/** Characters kept of one line; longer ones end with "…". */
export const VIEW_LOG_LINE_CHARS = 4000;

export interface RecentLogLine {
  seq: number;
  t: number;
  severity: Severity;
  message: string;
}

export class RecentLogs {
  private buf: RecentLogLine[] = [];
  /** Index of the oldest line once the ring is full. */
  private head = 0;
  /** Lines seen but no longer kept. */
  dropped = 0;

  push(line: RecentLogLine): void {
    const kept = line.message.length > VIEW_LOG_LINE_CHARS ? { ...line, message: `${line.message.slice(0, VIEW_LOG_LINE_CHARS - 1)}…` } : line;
    if (this.buf.length < VIEW_LOG_LINES) {
      this.buf.push(kept);
      return;
    }
    this.buf[this.head] = kept;
    this.head = (this.head + 1) % VIEW_LOG_LINES;
    this.dropped++;
  }

  /** Oldest first. */
  lines(): RecentLogLine[] {
    return this.head === 0 ? this.buf.slice() : [...this.buf.slice(this.head), ...this.buf.slice(0, this.head)];
  }

  static from(lines: readonly RecentLogLine[], dropped: number): RecentLogs {
    const r = new RecentLogs();
    for (const l of lines.slice(-VIEW_LOG_LINES)) r.push(l);
    r.dropped = dropped + Math.max(0, lines.length - VIEW_LOG_LINES);
    return r;
  }
}
