// The stream worker's reader against a scripted fetch: what it posts to the page, in what order,
// and that it stops reading while the page has not taken what it sent (web-client.test.ts runs
// the whole subscription through it as well).
import { describe, expect, it } from 'vitest';
import { EventStreamReader, MAX_UNACKED, type StreamMessage } from '../web/event-stream-reader.js';
import { parseMessages } from '../web/sse-reader.js';

function streamOf(chunks: string[]) {
  const enc = new TextEncoder();
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (pulled < chunks.length) ctl.enqueue(enc.encode(chunks[pulled++]));
      else ctl.close();
    },
  });
  return { stream, pulled: () => pulled };
}

const msg = (seq: number) => `id: ${seq}\ndata: {"seq":${seq}}\n\n`;
const settle = () => new Promise((r) => setTimeout(r, 20));

function reader(res: Response, piece?: number) {
  const posted: StreamMessage[] = [];
  const inits: RequestInit[] = [];
  const fetchFn = (async (_url: string, init: RequestInit) => {
    inits.push(init);
    return res;
  }) as unknown as typeof fetch;
  const r = new EventStreamReader(fetchFn, (m) => posted.push(m), piece);
  return { r, posted, inits };
}

const seqsOf = (posted: StreamMessage[]) => posted.flatMap((m) => (m.type === 'messages' ? parseMessages(m.batch, () => undefined).map((v) => (v as { seq: number }).seq) : []));

describe('EventStreamReader', () => {
  it('posts the status, then each piece as one batch in order, named messages in place, then the end', async () => {
    const text = `event: snapshot\ndata: {"id":"b1"}\n\n${msg(1)}${msg(2)}: heartbeat\n\n${msg(3)}`;
    const { r, posted, inits } = reader(new Response(streamOf([text.slice(0, 40), text.slice(40)]).stream, { status: 200 }));
    r.onRequest({ type: 'open', url: '/api/builds/b1/events', lastEventId: '7' });
    for (let i = 0; i < 10; i++) {
      await settle();
      r.onRequest({ type: 'ack', count: 1 });
    }
    expect(inits[0].headers).toEqual({ accept: 'text/event-stream', 'last-event-id': '7' });
    expect(posted[0]).toEqual({ type: 'status', status: 200, ok: true });
    expect(posted[1]).toEqual({ type: 'named', event: 'snapshot', data: '{"id":"b1"}' });
    expect(seqsOf(posted)).toEqual([1, 2, 3]);
    expect(posted[posted.length - 1]).toEqual({ type: 'end' });
  });

  it('stops reading while MAX_UNACKED messages wait for the page, and goes on as they are acknowledged', async () => {
    // One message a piece: every piece is one post.
    const chunks = Array.from({ length: 20 }, (_, i) => msg(i + 1));
    const body = streamOf(chunks);
    const { r, posted } = reader(new Response(body.stream, { status: 200 }), 16);
    r.onRequest({ type: 'open', url: '/e', lastEventId: '-1' });
    await settle();
    const batches = () => posted.filter((m) => m.type === 'messages').length;
    expect(batches()).toBe(MAX_UNACKED);
    const pulledWhileHeld = body.pulled();
    await settle();
    expect(batches()).toBe(MAX_UNACKED); // held: nothing more read or posted
    expect(body.pulled()).toBe(pulledWhileHeld);
    for (let i = 0; i < 40; i++) {
      r.onRequest({ type: 'ack', count: 1 });
      await new Promise((res) => setTimeout(res, 1));
    }
    await settle();
    expect(seqsOf(posted)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(posted[posted.length - 1]).toEqual({ type: 'end' });
  });

  it('passes a status that is not a stream on with its body, and nothing after it', async () => {
    const { r, posted } = reader(new Response('{"error":{"code":"not_found","message":"no build b9"}}', { status: 404 }));
    r.onRequest({ type: 'open', url: '/e', lastEventId: '-1' });
    await settle();
    expect(posted).toEqual([{ type: 'status', status: 404, ok: false, body: '{"error":{"code":"not_found","message":"no build b9"}}' }]);
    const gone = reader(new Response(null, { status: 204 }));
    gone.r.onRequest({ type: 'open', url: '/e', lastEventId: '3' });
    await settle();
    expect(gone.posted).toEqual([{ type: 'status', status: 204, ok: false, body: '' }]);
  });

  it('posts nothing more once aborted', async () => {
    const chunks = Array.from({ length: 10 }, (_, i) => msg(i + 1));
    const { r, posted } = reader(new Response(streamOf(chunks).stream, { status: 200 }), 16);
    r.onRequest({ type: 'open', url: '/e', lastEventId: '-1' });
    await settle();
    const n = posted.length;
    r.onRequest({ type: 'abort' });
    for (let i = 0; i < 10; i++) r.onRequest({ type: 'ack', count: 1 });
    await settle();
    expect(posted.length).toBe(n);
    expect(posted.some((m) => m.type === 'end' || m.type === 'error')).toBe(false);
  });

  it('reports a network failure as an error message', async () => {
    const posted: StreamMessage[] = [];
    const r = new EventStreamReader(
      (async () => {
        throw new TypeError('Failed to fetch');
      }) as unknown as typeof fetch,
      (m) => posted.push(m),
    );
    r.onRequest({ type: 'open', url: '/e', lastEventId: '-1' });
    await settle();
    expect(posted).toEqual([{ type: 'error', message: 'Failed to fetch' }]);
  });
});
