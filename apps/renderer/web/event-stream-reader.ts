// What the event-stream worker does (event-stream.worker.ts wires it to the worker's messages):
// it opens the build's text/event-stream with fetch, decodes it and splits it into SSE messages,
// and hands the page each piece's events as one JSON array text (sse-reader.ts: MessageBatch).
// The page then parses that text with one JSON.parse: reading the body, decoding it and framing
// the messages (a large share of the page's work for the stream in bench:ui's profiles) run on the
// worker's thread instead of the page's, and no object is cloned between the two.
//
// At most MAX_UNACKED messages are on their way to the page at once: past that the worker stops
// reading, so a page that cannot keep up leaves the data in the connection (the server's bounds
// then apply, as when the page read the body itself) instead of in an unbounded message queue.
import { PIECE_CHARS, readBodyText } from './chunk-feed.js';
import { SseChunkParser, type MessageBatch } from './sse-reader.js';

/** Page → worker. */
export type StreamRequest =
  /** Open one connection (the page's reconnect loop sends another after `end` or `error`). */
  | { type: 'open'; url: string; lastEventId: string }
  /** The page has handled `count` more `named` or `messages` messages. */
  | { type: 'ack'; count: number }
  /** Close the connection: nothing more is posted for it. */
  | { type: 'abort' };

/** Worker → page, in stream order. */
export type StreamMessage =
  /** The response's status; for one that is not a stream (not ok, no body, 204) its body text, and nothing follows. */
  | { type: 'status'; status: number; ok: boolean; body?: string }
  | { type: 'named'; event: string; data: string }
  | { type: 'messages'; batch: MessageBatch }
  /** The body ended (the server closed the stream). */
  | { type: 'end' }
  /** The connection failed (a network error, the body broke off). */
  | { type: 'error'; message: string };

/**
 * Messages posted and not yet acknowledged before the worker stops reading: at most this many
 * pieces of 64 K characters. The page acknowledges what it handled once per turn of its event
 * loop, not per message (each message to a worker costs the page's thread time, and a network
 * read is often small; docs/benchmarks.md).
 */
export const MAX_UNACKED = 8;

export class EventStreamReader {
  private abort: AbortController | null = null;
  private unacked = 0;
  private wake: (() => void) | null = null;

  constructor(
    private readonly fetchFn: typeof fetch,
    private readonly post: (m: StreamMessage, transfer?: Transferable[]) => void,
    private readonly piece = PIECE_CHARS,
  ) {}

  onRequest(r: StreamRequest): void {
    if (r.type === 'open') {
      this.close();
      void this.run(r.url, r.lastEventId);
    } else if (r.type === 'ack') {
      this.unacked = Math.max(0, this.unacked - r.count);
      if (this.unacked < MAX_UNACKED) this.resume();
    } else this.close();
  }

  private close(): void {
    this.abort?.abort();
    this.abort = null;
    this.unacked = 0;
    this.resume();
  }

  private resume(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async run(url: string, lastEventId: string): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    const live = () => !abort.signal.aborted;
    const send = (m: StreamMessage, transfer?: Transferable[]) => {
      if (!live()) return;
      if (m.type === 'named' || m.type === 'messages') this.unacked++;
      this.post(m, transfer);
    };
    try {
      const res = await this.fetchFn(url, {
        headers: { accept: 'text/event-stream', 'last-event-id': lastEventId },
        credentials: 'same-origin',
        signal: abort.signal,
        cache: 'no-store',
      });
      if (res.status === 204 || !res.ok || !res.body) {
        send({ type: 'status', status: res.status, ok: res.ok && !!res.body, body: await res.text().catch(() => '') });
        return;
      }
      send({ type: 'status', status: res.status, ok: true });
      const parser = new SseChunkParser(
        {
          onNamed: (event, data) => send({ type: 'named', event, data }),
          onMessages: () => undefined,
          onBadMessage: () => undefined,
        },
        (batch) => send({ type: 'messages', batch }, [batch.lengths.buffer]),
      );
      const ended = await readBodyText(
        res.body,
        async (text) => {
          // Pieces, as the page parsed them itself (chunk-feed.ts): each message it gets is a
          // short task there, however much the connection had buffered.
          for (let i = 0; i < text.length && live(); i += this.piece) {
            parser.push(text.slice(i, i + this.piece));
            while (this.unacked >= MAX_UNACKED && live()) await new Promise<void>((r) => (this.wake = r));
          }
        },
        () => !live(),
      );
      if (ended && live()) send({ type: 'end' });
    } catch (e) {
      send({ type: 'error', message: (e as Error).message });
    } finally {
      if (this.abort === abort) this.abort = null;
    }
  }
}
