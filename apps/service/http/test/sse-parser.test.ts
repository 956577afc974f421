import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../sse-parser.js';
import { formatEvents } from '../sse.js';
import type { BuildEvent } from '../../../shared/protocol.js';

function parseAll(chunks: Array<string | Uint8Array>) {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  const p = new SseParser(
    (m) => messages.push(m),
    (c) => comments.push(c),
  );
  for (const c of chunks) p.push(c);
  return { messages, comments };
}

describe('SSE parser', () => {
  const stream = 'event: snapshot\ndata: {"a":1}\n\n: heartbeat\n\nid: 7\ndata: line1\ndata: line2\n\nid: 8\r\ndata: x\r\n\r\n';

  it('reads events, ids, multi-line data and comments', () => {
    const { messages, comments } = parseAll([stream]);
    expect(messages).toEqual([
      { event: 'snapshot', data: '{"a":1}', id: undefined },
      { event: 'message', data: 'line1\nline2', id: '7' },
      { event: 'message', data: 'x', id: '8' },
    ]);
    expect(comments).toEqual(['heartbeat']);
  });

  it('gives the same result whatever the chunk boundaries, including split UTF-8 and CRLF', () => {
    const text = `${stream}data: ü€\n\n`;
    const whole = parseAll([text]).messages;
    const bytes = new TextEncoder().encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(parseAll([bytes.slice(0, cut), bytes.slice(cut)]).messages, `cut at ${cut}`).toEqual(whole);
    }
    expect(parseAll([...bytes].map((b) => new Uint8Array([b]))).messages).toEqual(whole);
  });

  it('round-trips what the server formats: one data line per event, id = seq', () => {
    const events = [
      { v: 1, buildId: 'b1', seq: 3, t: 1.5, type: 'log', severity: 'info', message: 'two\nlines and "quotes"' },
      { v: 1, buildId: 'b1', seq: 4, t: 2, type: 'phase.step', id: 1, step: 0, stepsDone: 1 },
    ] as BuildEvent[];
    const { messages } = parseAll([formatEvents(events)]);
    expect(messages.map((m) => m.id)).toEqual(['3', '4']);
    expect(messages.map((m) => JSON.parse(m.data))).toEqual(events);
  });
});
