// Reads the server's text/event-stream with fetch instead of EventSource. A fast build sends
// 100k+ events a second; EventSource dispatches one DOM event (one task) per message, which alone
// saturated the page in measurements here. Reading the body in chunks lets one chunk of
// hundreds of messages be parsed with a single JSON.parse and handed over as one batch.
// Same endpoint, same cookie, and Last-Event-ID on reconnect, as EventSource would. In the
// browser the stream worker (event-stream-reader.ts) runs this parser and passes each piece's
// messages on unparsed (MessageBatch); the page parses them (parseMessages).

export interface SseHandlers {
  /** `event: <name>` messages other than the default one (e.g. "snapshot"), data unparsed. */
  onNamed(event: string, data: string): void;
  /** Default messages of one chunk, each `data` already parsed as JSON. */
  onMessages(values: unknown[]): void;
  /** A message whose data is not JSON (the rest of the chunk is still delivered). */
  onBadMessage(data: string, err: Error): void;
}

/**
 * Default messages' data of one piece, joined as one JSON array text (`[d1,d2,...]`), with each
 * data's length so that a batch that does not parse can still be taken apart message by message.
 * What the stream worker (event-stream-reader.ts) hands the page: one string and one transferable
 * array per piece instead of thousands of objects to clone.
 */
export interface MessageBatch {
  text: string;
  lengths: Int32Array;
}

export function joinMessages(datas: readonly string[]): MessageBatch {
  const lengths = new Int32Array(datas.length);
  for (let i = 0; i < datas.length; i++) lengths[i] = datas[i].length;
  return { text: `[${datas.join(',')}]`, lengths };
}

/**
 * The messages of a batch, parsed with one JSON.parse; when that fails (or `[a,b]` parsed as a
 * different count, as a data of "1,2" would), message by message, each one that is not JSON
 * reported to `onBad` and left out.
 */
export function parseMessages(batch: MessageBatch, onBad: (data: string, err: Error) => void): unknown[] {
  const { text, lengths } = batch;
  try {
    const values = JSON.parse(text) as unknown[];
    if (values.length !== lengths.length) throw new Error('message count mismatch');
    return values;
  } catch {
    const values: unknown[] = [];
    let at = 1;
    for (let i = 0; i < lengths.length; i++) {
      const d = text.slice(at, at + lengths[i]);
      at += lengths[i] + 1;
      try {
        values.push(JSON.parse(d));
      } catch (e) {
        onBad(d, e as Error);
      }
    }
    return values;
  }
}

/** Incremental SSE parser: fields, comments, CRLF or LF, multi-line data, chunk splits anywhere. */
export class SseChunkParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  lastId: string | undefined;

  /**
   * `raw`, when given, takes the default messages' data of each piece unparsed (the stream
   * worker passes them on to the page as they are) and `h.onMessages` is not called.
   */
  constructor(
    private readonly h: SseHandlers,
    private readonly raw?: (batch: MessageBatch) => void,
  ) {}

  push(text: string): void {
    this.buf += text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
    // A lone trailing '\r' could be half of '\r\n': the replace above may have seen only it;
    // harmless, because an empty line is what ends a message either way.
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const nl = this.buf.indexOf('\n', start);
      if (nl < 0) break;
      const line = this.buf.slice(start, nl);
      start = nl + 1;
      if (line === '') {
        this.dispatch(out);
        continue;
      }
      if (line.charCodeAt(0) === 58 /* ':' comment */) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    }
    this.buf = this.buf.slice(start);
    this.deliver(out);
  }

  private dispatch(out: string[]): void {
    if (this.data.length > 0) {
      // Nearly every message has one data line: no join (and no new string) for those.
      const data = this.data.length === 1 ? this.data[0] : this.data.join('\n');
      if (this.event === '' || this.event === 'message') out.push(data);
      else {
        // Keep order: messages before a named one are delivered before it.
        this.deliver(out);
        out.length = 0;
        this.h.onNamed(this.event, data);
      }
    }
    // Emptied in place rather than replaced: one array fewer per message at 100k messages/s.
    this.data.length = 0;
    this.event = '';
  }

  private deliver(datas: string[]): void {
    if (datas.length === 0) return;
    const batch = joinMessages(datas);
    datas.length = 0;
    if (this.raw) {
      this.raw(batch);
      return;
    }
    const values = parseMessages(batch, (d, e) => this.h.onBadMessage(d, e));
    if (values.length > 0) this.h.onMessages(values);
  }
}
