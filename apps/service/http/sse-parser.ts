// An incremental parser for text/event-stream (the WHATWG rules that matter here: fields,
// comments, CRLF/LF line ends, multi-line data). Used by the benchmark and the tests to read the
// server's streams the way EventSource would, chunk boundaries anywhere.

export interface SseMessage {
  /** "message" unless an `event:` field said otherwise. */
  event: string;
  data: string;
  /** The `id:` field of this message, if it had one. */
  id?: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private hasData = false;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly onMessage: (msg: SseMessage) => void,
    private readonly onComment: (text: string) => void = () => undefined,
  ) {}

  push(chunk: Uint8Array | string): void {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const eol = /\r\n|\r|\n/g;
    let start = 0;
    for (let m = eol.exec(this.buffer); m; m = eol.exec(this.buffer)) {
      // A lone CR at the very end of the buffer may be the first half of CRLF: wait for more.
      if (m[0] === '\r' && m.index + 1 === this.buffer.length) break;
      this.line(this.buffer.slice(start, m.index));
      start = m.index + m[0].length;
    }
    this.buffer = this.buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return this.onComment(line.slice(1).trimStart());
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    if (this.hasData) this.onMessage({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
    this.data = [];
    this.hasData = false;
    this.event = '';
    this.id = undefined;
  }
}
