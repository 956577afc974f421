// The base protocol's framing (`Content-Length: N\r\n\r\n` + N bytes), checked before the JSON-RPC
// library sees a byte. vscode-jsonrpc's StreamMessageReader (v10) has no message size limit and
// cannot resynchronise: after a header without Content-Length, or with `-5`, `abc` or
// `99999999999`, it fires an error and then waits forever for a body that never comes, answering
// nothing. This guard sits between stdin and that reader: a frame whose header is sound and whose
// length is within the limit is passed on (header rewritten to a plain Content-Length, body
// streamed through untouched); any other frame is logged and skipped up to the next
// `Content-Length:` header, holding only a few bytes while it searches, so a 200 MiB message is
// dropped without ever being held in memory. A valid message sent after a bad one is answered.
import { Transform, type TransformCallback } from 'node:stream';

/** 8 MiB, the limit the MCP server has for one line. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** A header block longer than this without its blank line is not a header. */
export const MAX_HEADER_BYTES = 8 * 1024;

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
const NEEDLE = 'content-length:';

export interface FrameGuardOptions {
  maxMessageBytes?: number;
  /** One line per bad frame and per resynchronisation. */
  log: (line: string) => void;
}

type State = { kind: 'header' } | { kind: 'body'; left: number } | { kind: 'resync'; from: number };

/** Why a header block cannot start a message, or its body length. */
function parseHeader(block: string, max: number): { length: number } | { error: string; wholeHeader?: true } {
  let length: number | undefined;
  for (const line of block.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { error: `header line ${JSON.stringify(line.slice(0, 80))} is not "Name: value"` };
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name !== 'content-length') continue; // Content-Type and others: nothing to check
    if (!/^\d{1,16}$/.test(value)) return { error: `Content-Length ${JSON.stringify(value.slice(0, 40))} is not a byte count` };
    // Two lengths that disagree: either could be the truth, so the frame is refused at once
    // instead of waiting for a body one of them promises.
    if (length !== undefined && length !== Number(value))
      return { error: `the header has two different Content-Length values (${length} and ${Number(value)})`, wholeHeader: true };
    length = Number(value);
  }
  if (length === undefined) return { error: 'the header has no Content-Length' };
  if (length > max) return { error: `a message of ${length} bytes exceeds the limit of ${max} bytes` };
  return { length };
}

/** A Transform: raw stdin bytes in, well-formed frames out. */
export class FrameGuard extends Transform {
  private readonly max: number;
  private readonly log: (line: string) => void;
  private state: State = { kind: 'header' };
  /** Header bytes so far (state header), or the last few bytes searched (state resync). */
  private pending = Buffer.alloc(0);
  /** Absolute stream position of pending[0], for the log. */
  private pendingAt = 0;

  constructor(opts: FrameGuardOptions) {
    super();
    this.max = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.log = opts.log;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = this.pendingAt;
    this.pending = Buffer.alloc(0);
    while (buf.length > 0) {
      const s = this.state;
      if (s.kind === 'body') {
        const n = Math.min(s.left, buf.length);
        this.push(buf.subarray(0, n));
        s.left -= n;
        if (s.left === 0) this.state = { kind: 'header' };
        buf = buf.subarray(n);
        at += n;
      } else if (s.kind === 'header') {
        const end = buf.indexOf(HEADER_END);
        if (end < 0 && buf.length <= MAX_HEADER_BYTES) {
          this.keep(buf, at);
          break;
        }
        const parsed =
          end < 0 || end > MAX_HEADER_BYTES ? { error: `no blank line ends the header within ${MAX_HEADER_BYTES} bytes` } : parseHeader(buf.toString('latin1', 0, end), this.max);
        if ('error' in parsed) {
          // Searched from the next byte, not from the end of this block: a real header may start
          // inside what looked like one (garbage, then "Content-Length: …").
          // A header that is one but contradicts itself is skipped whole: its second
          // Content-Length line is no fresh start.
          const skip = 'wholeHeader' in parsed ? end + HEADER_END.length : 1;
          this.bad(at, parsed.error);
          this.state = { kind: 'resync', from: at };
          buf = buf.subarray(skip);
          at += skip;
          continue;
        }
        const next = end + HEADER_END.length;
        this.push(Buffer.from(`Content-Length: ${parsed.length}\r\n\r\n`, 'latin1'));
        if (parsed.length > 0) this.state = { kind: 'body', left: parsed.length };
        buf = buf.subarray(next);
        at += next;
      } else {
        // Case-insensitive search; latin1 keeps one char per byte, so offsets stay byte offsets.
        const hit = buf.toString('latin1').toLowerCase().indexOf(NEEDLE);
        if (hit < 0) {
          // Keep the tail a header name could be cut in.
          const keep = Math.min(buf.length, NEEDLE.length - 1);
          this.keep(buf.subarray(buf.length - keep), at + buf.length - keep);
          break;
        }
        this.log(`skipped ${at + hit - s.from} bytes; reading on from the Content-Length header at byte ${at + hit}`);
        this.state = { kind: 'header' };
        buf = buf.subarray(hit);
        at += hit;
      }
    }
    if (this.pending.length === 0) this.pendingAt = at;
    done();
  }

  private keep(b: Buffer, at: number): void {
    this.pending = Buffer.from(b);
    this.pendingAt = at;
  }

  private bad(at: number, why: string): void {
    this.log(`bad message framing at byte ${at}: ${why}; skipping to the next Content-Length header`);
  }
}
