// The wire walker under the model reader: framing, limits, and the same answers whatever the
// read window (tiny windows force every message through the field-by-field path).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../../test/support/onnx-gen.js';
import { type ModelVisitor, TENSOR, walkModel } from '../onnx-walk.js';
import { FileCursor, WireError, encodeVarint, parseHeader, strip } from '../onnx-wire.js';

const dir = tempDir('tbs-wire-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function wireError(f: () => unknown): WireError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WireError);
    return e as WireError;
  }
  throw new Error('expected a WireError');
}

async function withCursor<T>(bytes: Uint8Array, window: number, f: (c: FileCursor) => Promise<T>): Promise<T> {
  const p = path.join(dir, `blob-${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(p, bytes);
  const fh = await fs.promises.open(p, 'r');
  try {
    return await f(new FileCursor(fh, bytes.length, window));
  } finally {
    await fh.close();
  }
}

describe('field headers', () => {
  it('round-trips varints up to 2^53-1 as lengths', () => {
    for (const n of [0, 1, 127, 128, 300, 2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]) {
      const b = Buffer.concat([encodeVarint((9 << 3) | 2), encodeVarint(n)]);
      const h = parseHeader(b, 0, b.length, 100);
      expect(h).toEqual({ field: 9, wire: 2, start: 100, payload: 100 + b.length, length: n });
    }
  });

  it('measures a varint value without needing it to fit a Number (int64 -1 is 10 bytes)', () => {
    const b = Buffer.from(onnx.ModelProto.encode({ irVersion: -1 }).finish());
    expect(parseHeader(b, 0, b.length, 0)).toMatchObject({ field: 1, wire: 0, length: 10 });
  });

  it('refuses what protobuf (or ONNX) never writes', () => {
    expect(wireError(() => parseHeader(Buffer.from([0x07]), 0, 1, 0)).message).toMatch(/invalid field number 0/);
    expect(wireError(() => parseHeader(Buffer.from([0x0b]), 0, 1, 0)).message).toMatch(/wire type 3/);
    const long = Buffer.from([0x0a, ...new Array(11).fill(0xff)]);
    expect(wireError(() => parseHeader(long, 0, long.length, 0)).message).toMatch(/longer than 10 bytes/);
    const huge = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    expect(wireError(() => parseHeader(huge, 0, huge.length, 0)).message).toMatch(/beyond any file size/);
    const cut = wireError(() => parseHeader(Buffer.from([0x0a, 0x80]), 0, 2, 0));
    expect(cut.kind).toBe('truncated');
  });
});

describe('strip', () => {
  const tensor: onnx.ITensorProto = {
    name: 'w',
    dims: [3, 2],
    dataType: onnx.TensorProto.DataType.INT64,
    int64Data: [1, -1, 300, 0, 2 ** 40, -5],
    floatData: [1, 2, 3],
    doubleData: [1, 2],
    stringData: [Buffer.from('abc'), Buffer.from('de')],
    rawData: Buffer.alloc(5000, 7),
    externalData: [{ key: 'location', value: 'x.bin' }],
    docString: 'not needed',
  };
  const bytes = onnx.TensorProto.encode(tensor).finish();

  it.each([[7], [64], [1 << 20]])('keeps the small fields and measures the data fields (window %d)', async (window) => {
    const s = await withCursor(bytes, window, (c) => strip(c, 0, bytes.length, TENSOR));
    const t = onnx.TensorProto.decode(s.bytes);
    expect(t.name).toBe('w');
    expect(t.dims.map(Number)).toEqual([3, 2]);
    expect(t.dataType).toBe(onnx.TensorProto.DataType.INT64);
    expect(t.externalData[0].value).toBe('x.bin');
    expect(t.rawData.length).toBe(0);
    expect(t.int64Data.length).toBe(0);
    expect(t.docString).toBe('');
    expect(s.bytes.length).toBeLessThan(100);
    expect(s.data).toHaveLength(1);
    const d = s.data[0];
    expect(d.peeked).toBe(onnx.TensorProto.DataType.INT64);
    expect(d.bytes[9]).toBe(5000);
    expect(d.count).toMatchObject({ 7: 6, 4: 3, 10: 2, 6: 2 });
    expect(d.bytes[6]).toBe(5);
  });

  it('counts packed varints across window boundaries', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? -i : i * 1000));
    const b = onnx.TensorProto.encode({ int64Data: many, dataType: 7 }).finish();
    for (const w of [5, 33, 4096]) {
      const s = await withCursor(b, w, (c) => strip(c, 0, b.length, TENSOR));
      expect(s.data[0].count[7]).toBe(5000);
    }
  });

  it('refuses a kept field larger than the cap instead of allocating it', async () => {
    const b = onnx.TensorProto.encode({ name: 'x'.repeat(300) }).finish();
    await expect(withCursor(b, 64, (c) => strip(c, 0, b.length, TENSOR, 100))).rejects.toThrow(/TensorProto field 8 .* 30\d bytes \(more than 100\)/);
  });

  it('calls a length running past the file "truncated" and past its message "malformed"', async () => {
    const b = Buffer.from(onnx.TensorProto.encode({ name: 'abc', rawData: Buffer.alloc(100) }).finish());
    const cut = b.subarray(0, 50);
    const e1 = await withCursor(cut, 16, (c) => strip(c, 0, 1000, TENSOR)).catch((e) => e);
    expect(e1).toBeInstanceOf(WireError);
    expect(e1.kind).toBe('truncated');
    const e2 = await withCursor(b, 16, (c) => strip(c, 0, 20, TENSOR)).catch((e) => e);
    expect(e2.kind).toBe('malformed');
    expect(e2.message).toMatch(/past the end of its enclosing message/);
  });
});

describe('walkModel', () => {
  function recorder() {
    const seen: unknown[] = [];
    const v: ModelVisitor = {
      node: (n, t, depth) => seen.push(['node', n.toJSON(), t, depth]),
      initializer: (t, d, depth) => seen.push(['init', t.toJSON(), d, depth]),
      sparseInitializer: (s, t, depth) => seen.push(['sparse', s.toJSON(), t, depth]),
      input: (i) => seen.push(['in', i.toJSON()]),
      output: (o) => seen.push(['out', o.toJSON()]),
    };
    return { seen, v };
  }

  it('visits the same things whatever the window', async () => {
    const p = writeModel(path.join(dir, 'w.onnx'), { layers: 5, weightBytes: 200_000, constant: { bytes: 50_000 }, subgraphs: { bytes: 30_000 } });
    const ref = recorder();
    const refModel = await walkModel(p, ref.v);
    expect(ref.seen.length).toBeGreaterThan(20);
    // If branches and the If nested in one are walked, at their depth.
    const inits = (ref.seen as unknown[][]).filter((e) => e[0] === 'init');
    expect(inits.map((e) => [(e[1] as { name: string }).name, e[3]])).toEqual(
      expect.arrayContaining([
        ['then_w', 1],
        ['inner_then_w', 2],
        ['inner_else_w', 2],
      ]),
    );
    for (const window of [19, 256, 70_000]) {
      const r = recorder();
      const m = await walkModel(p, r.v, { window });
      expect(r.seen).toEqual(ref.seen);
      expect(m.header.toJSON()).toEqual(refModel.header.toJSON());
      expect(m.graphName).toBe('test_graph');
    }
  });
});

describe('the event loop keeps running during a walk', () => {
  it('yields between fields even when the whole graph is one window (no I/O to wait on)', async () => {
    const p = writeModel(path.join(dir, 'many-nodes.onnx'), { layers: 12_000, channels: 1 });
    // A ticker that re-arms itself: it only runs when the walk lets the event loop turn.
    let ticks = 0;
    let on = true;
    const tick = () => {
      ticks++;
      if (on) setImmediate(tick);
    };
    setImmediate(tick);
    const t0 = performance.now();
    let nodes = 0;
    await walkModel(p, { node: () => nodes++, initializer() {}, sparseInitializer() {}, input() {}, output() {} }, { window: 64 * 2 ** 20 });
    const ms = performance.now() - t0;
    on = false;
    expect(nodes).toBeGreaterThan(30_000);
    // One turn per ~8 ms of parsing; without yielding, the parse after the single read is one turn.
    expect(ticks).toBeGreaterThanOrEqual(Math.min(10, Math.floor(ms / 20)));
    expect(ms).toBeGreaterThan(80); // enough work for the check above to mean something
  });
});
