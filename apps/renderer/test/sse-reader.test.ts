import { describe, expect, it } from 'vitest';
import { SseChunkParser } from '../web/sse-reader.js';

function parse(chunks: string[]) {
  const out: Array<[string, unknown]> = [];
  const p = new SseChunkParser({
    onNamed: (e, d) => out.push([e, d]),
    onMessages: (vs) => out.push(['batch', vs]),
    onBadMessage: (d) => out.push(['bad', d]),
  });
  for (const c of chunks) p.push(c);
  return { out, lastId: p.lastId };
}

describe('SseChunkParser', () => {
  it('handles CRLF, comments, multi-line data, named events and ids', () => {
    const { out, lastId } = parse([': hello\r\nevent: snapshot\r\ndata: {"a":\r\ndata: 1}\r\n\r\nid: 7\r\ndata: {"seq":7}\r\n\r\n']);
    expect(out).toEqual([
      ['snapshot', '{"a":\n1}'],
      ['batch', [{ seq: 7 }]],
    ]);
    expect(lastId).toBe('7');
  });

  it('gives the same messages whatever the chunk boundaries', () => {
    const text = 'data: {"n":1}\n\nevent: snapshot\ndata: "s"\n\ndata: {"n":2}\n\ndata: {"n":3}\n\n';
    const whole = parse([text]).out;
    for (let cut = 1; cut < text.length; cut++) {
      const split = parse([text.slice(0, cut), text.slice(cut)]).out;
      // Batches may split differently; the flattened order must not change.
      const flat = (o: typeof whole) => o.flatMap(([k, v]) => (k === 'batch' ? (v as unknown[]).map((x) => ['msg', x]) : [[k, v]]));
      expect(flat(split)).toEqual(flat(whole));
    }
  });

  it('does not let a data field that is a JSON fragment merge messages', () => {
    const { out } = parse(['data: 1,2\n\ndata: 3\n\n']);
    expect(out).toEqual([
      ['bad', '1,2'],
      ['batch', [3]],
    ]);
  });
});
