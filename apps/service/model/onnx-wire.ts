// A minimal protobuf wire-format walker over a file, read through small positioned windows.
//
// Why not decode the file with protobufjs: a ModelProto holds the weights inline (raw_data), so
// decoding it needs the whole file in memory and is capped at 2 GiB. Walking the framing
// ourselves (tag, varint, length prefix) lets the reader step over a 1 GiB tensor by its length
// without reading it, and still hand each small sub-message (a node, a value info, a tensor whose
// data fields were left out) to protobufjs, which decodes those far better than we would.
//
// `strip` copies a message's wanted fields into a new, small buffer and measures (without
// keeping) its data fields; protobufjs then decodes that buffer as the same message type.
import type * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';

/** `truncated`: a length runs past the end of the file; `malformed`: anything else that is not protobuf. */
export class WireError extends Error {
  constructor(
    readonly kind: 'truncated' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'WireError';
  }
}

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

export interface FieldHeader {
  field: number;
  wire: number;
  /** Absolute position of the tag. */
  start: number;
  /** Absolute position of the payload (for VARINT: the varint itself). */
  payload: number;
  /** Payload bytes (for VARINT: the varint's length). */
  length: number;
}

/** Reads a varint as a Number; lengths and field numbers past 2^53 are corrupt, not big. */
function varint(buf: Buffer, off: number, limit: number, what: string, at: number, isLength = true): [value: number, next: number] {
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (off + i >= limit) throw new WireError('truncated', `${what} at byte ${at} is cut off`);
    const b = buf[off + i];
    value += (b & 0x7f) * mul;
    if (b < 0x80) {
      if (isLength && value > Number.MAX_SAFE_INTEGER) throw new WireError('malformed', `${what} at byte ${at} is ${value}, beyond any file size`);
      return [value, off + i + 1];
    }
    mul *= 128;
  }
  throw new WireError('malformed', `${what} at byte ${at} is a varint longer than 10 bytes`);
}

/**
 * Parses one field header at buf[off] (absolute file position `abs`). `limit` is where the
 * readable bytes end in `buf`. Groups (wire types 3, 4) do not occur in ONNX: malformed.
 */
export function parseHeader(buf: Buffer, off: number, limit: number, abs: number): FieldHeader {
  const [tag, p] = varint(buf, off, limit, 'a field tag', abs);
  const field = Math.floor(tag / 8);
  const wire = tag % 8;
  if (field === 0 || field > 0x1fffffff) throw new WireError('malformed', `invalid field number ${field} at byte ${abs}`);
  const payload = abs + (p - off);
  switch (wire) {
    case WIRE_VARINT: {
      // Only its extent matters here (values are decoded exactly by protobufjs, as Long).
      const [, q] = varint(buf, p, limit, `field ${field}'s value`, payload, false);
      return { field, wire, start: abs, payload, length: q - p };
    }
    case WIRE_I64:
      return { field, wire, start: abs, payload, length: 8 };
    case WIRE_I32:
      return { field, wire, start: abs, payload, length: 4 };
    case WIRE_LEN: {
      const [len, q] = varint(buf, p, limit, `field ${field}'s length`, payload);
      return { field, wire, start: abs, payload: abs + (q - off), length: len };
    }
    default:
      throw new WireError('malformed', `field ${field} at byte ${abs} has wire type ${wire}, which ONNX never uses`);
  }
}

/** Longest stretch a walk runs before letting other work on the event loop run. */
const YIELD_AFTER_MS = 8;

/** Positioned reads of one open file into a window; the file is never read whole. */
export class FileCursor {
  private buf = Buffer.alloc(0);
  /** Absolute file position of buf[0]. */
  private base = 0;

  constructor(
    private readonly fh: fs.promises.FileHandle,
    readonly size: number,
    readonly window = 1 << 20,
  ) {}

  private lastYield = performance.now();

  /**
   * Lets the event loop run if this walk has held it for a slice. Reads from the window resolve
   * as microtasks, which never yield: a 50,000-node graph would hold a server's loop for a whole
   * 1 MiB window (~80 ms) at a time without this.
   */
  async yieldSometimes(): Promise<void> {
    if (performance.now() - this.lastYield < YIELD_AFTER_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.lastYield = performance.now();
  }

  /** True when [pos, pos + n) is already in the window. */
  has(pos: number, n: number): boolean {
    return pos >= this.base && pos + n <= this.base + this.buf.length;
  }

  /** Makes [pos, pos + n) available; n may exceed the window (the caller caps what it keeps). */
  async ensure(pos: number, n: number): Promise<void> {
    if (this.has(pos, n)) return;
    if (pos + n > this.size) throw new WireError('truncated', `${n} bytes needed at byte ${pos}, but the file ends at byte ${this.size}`);
    const want = Math.min(Math.max(n, this.window), this.size - pos);
    // A fresh buffer each time: views handed out earlier (kept fields) must stay valid.
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.fh.read(buf, got, want - got, pos + got);
      if (bytesRead === 0) throw new WireError('truncated', `the file ended at byte ${pos + got} while reading (it changed while being read?)`);
      got += bytesRead;
    }
    this.buf = buf;
    this.base = pos;
  }

  /** The window and the offset of `pos` in it (after ensure/has). */
  at(pos: number): { buf: Buffer; off: number; limit: number } {
    return { buf: this.buf, off: pos - this.base, limit: this.buf.length };
  }

  /** Field header at `pos`, within a message ending at `end`. */
  async header(pos: number, end: number): Promise<FieldHeader> {
    // A tag and a length are at most 20 bytes; near the end only what is left.
    await this.ensure(pos, Math.min(20, end - pos));
    const { buf, off } = this.at(pos);
    const h = parseHeader(buf, off, off + Math.min(20, end - pos), pos);
    if (h.payload + h.length > end) throw outOfBounds(h, end, this.size);
    return h;
  }

  /** Counts bytes below 0x80 (= varints ending) in [pos, pos + n), streaming through the window. */
  async countVarints(pos: number, n: number): Promise<number> {
    let count = 0;
    for (let p = pos; p < pos + n;) {
      const chunk = Math.min(this.window, pos + n - p);
      await this.ensure(p, chunk);
      const { buf, off } = this.at(p);
      count += countVarintEnds(buf, off, off + chunk);
      p += chunk;
    }
    return count;
  }
}

function outOfBounds(h: FieldHeader, end: number, size: number): WireError {
  const stop = h.payload + h.length;
  return stop > size
    ? new WireError('truncated', `field ${h.field} at byte ${h.start} declares ${h.length} bytes, but the file ends at byte ${size}`)
    : new WireError('malformed', `field ${h.field} at byte ${h.start} declares ${h.length} bytes, past the end of its enclosing message (byte ${end})`);
}

export function countVarintEnds(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (buf[i] < 0x80) n++;
  return n;
}

// ───────────────────────────── stripping ─────────────────────────────

/** Sizes of the data fields of one tensor-like message, measured without keeping them. */
export interface DataSizes {
  /** The message's `peek` varint field (e.g. TensorProto.data_type), when present. */
  peeked: number;
  /** Per data field number: payload bytes (LEN fields), or element count (see MessageSpec.data). */
  bytes: Record<number, number>;
  count: Record<number, number>;
}

/**
 * What to do with each field of a message. Fields not listed are skipped. `keep` fields are
 * copied (they must be small: see `maxKeep`); `data` fields are measured and left out, as
 * 'fixed32' | 'fixed64' | 'varint' | 'bytes' element layouts; `sub` fields are stripped
 * recursively with their own spec.
 */
export interface MessageSpec {
  name: string;
  keep: ReadonlySet<number>;
  data?: Readonly<Record<number, 'fixed32' | 'fixed64' | 'varint' | 'bytes'>>;
  sub?: Readonly<Record<number, MessageSpec>>;
  /** A varint field also recorded in DataSizes.peeked (the data's element type). */
  peek?: number;
}

export interface Stripped {
  bytes: Buffer;
  /** One entry per message with `data` fields met inside, in file order (this one first). */
  data: DataSizes[];
}

/** Anything kept verbatim above this is not a plausible name/shape/type: refuse, do not allocate. */
export const DEFAULT_MAX_KEEP = 16 * 2 ** 20;

class Out {
  chunks: Buffer[] = [];
  length = 0;
  data: DataSizes[] = [];
  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  pushSub(field: number, child: Out): void {
    this.push(encodeVarint(field * 8 + WIRE_LEN));
    this.push(encodeVarint(child.length));
    for (const c of child.chunks) this.push(c);
    this.data.push(...child.data);
  }
}

export function encodeVarint(v: number): Buffer {
  const bytes: number[] = [];
  let x = v;
  while (x >= 0x80) {
    bytes.push((x % 128) | 0x80);
    x = Math.floor(x / 128);
  }
  bytes.push(x);
  return Buffer.from(bytes);
}

function newSizes(): DataSizes {
  return { peeked: 0, bytes: {}, count: {} };
}

function wrongWire(spec: MessageSpec, h: FieldHeader, want: string): WireError {
  return new WireError('malformed', `${spec.name} field ${h.field} at byte ${h.start} has wire type ${h.wire}, expected ${want}`);
}

function elementsOf(kind: 'fixed32' | 'fixed64' | 'varint' | 'bytes', h: FieldHeader, varintsInPayload: () => number): number {
  if (h.wire !== WIRE_LEN) return 1; // one unpacked element
  if (kind === 'fixed32') return Math.floor(h.length / 4);
  if (kind === 'fixed64') return Math.floor(h.length / 8);
  if (kind === 'varint') return varintsInPayload();
  return 1; // one string / bytes value
}

/** Strips the message at [from, to) held entirely in `buf` (absolute file position `abs`). */
function stripSync(buf: Buffer, from: number, to: number, abs: number, spec: MessageSpec, maxKeep: number): Out {
  const out = new Out();
  const sizes = spec.data || spec.peek !== undefined ? newSizes() : undefined;
  if (sizes) out.data.push(sizes);
  for (let off = from; off < to;) {
    const h = parseHeader(buf, off, to, abs + (off - from));
    const pOff = off + (h.payload - h.start);
    const end = pOff + h.length;
    if (end > to) throw outOfBounds(h, abs + (to - from), Infinity);
    const kind = spec.data?.[h.field];
    const sub = spec.sub?.[h.field];
    if (sub) {
      if (h.wire !== WIRE_LEN) throw wrongWire(spec, h, 'a length-delimited message');
      out.pushSub(h.field, stripSync(buf, pOff, end, h.payload, sub, maxKeep));
    } else if (kind) {
      sizes!.bytes[h.field] = (sizes!.bytes[h.field] ?? 0) + h.length;
      sizes!.count[h.field] = (sizes!.count[h.field] ?? 0) + elementsOf(kind, h, () => countVarintEnds(buf, pOff, end));
    } else if (spec.keep.has(h.field)) {
      if (h.length > maxKeep) throw tooBig(spec, h, maxKeep);
      if (h.field === spec.peek && h.wire === WIRE_VARINT) sizes!.peeked = varint(buf, pOff, end, 'a value', h.payload, false)[0];
      out.push(Buffer.from(buf.subarray(off, end)));
    }
    off = end;
  }
  return out;
}

function tooBig(spec: MessageSpec, h: FieldHeader, maxKeep: number): WireError {
  return new WireError('malformed', `${spec.name} field ${h.field} at byte ${h.start} is ${h.length} bytes (more than ${maxKeep}): not a plausible ONNX model`);
}

async function stripAsync(cur: FileCursor, from: number, to: number, spec: MessageSpec, maxKeep: number): Promise<Out> {
  if (to - from <= cur.window) {
    await cur.ensure(from, to - from);
    const { buf, off } = cur.at(from);
    return stripSync(buf, off, off + (to - from), from, spec, maxKeep);
  }
  const out = new Out();
  const sizes = spec.data || spec.peek !== undefined ? newSizes() : undefined;
  if (sizes) out.data.push(sizes);
  for (let pos = from; pos < to;) {
    await cur.yieldSometimes();
    const h = await cur.header(pos, to);
    const end = h.payload + h.length;
    const kind = spec.data?.[h.field];
    const sub = spec.sub?.[h.field];
    if (sub) {
      if (h.wire !== WIRE_LEN) throw wrongWire(spec, h, 'a length-delimited message');
      out.pushSub(h.field, await stripAsync(cur, h.payload, end, sub, maxKeep));
    } else if (kind) {
      sizes!.bytes[h.field] = (sizes!.bytes[h.field] ?? 0) + h.length;
      const n = kind === 'varint' && h.wire === WIRE_LEN ? await cur.countVarints(h.payload, h.length) : elementsOf(kind, h, () => 0);
      sizes!.count[h.field] = (sizes!.count[h.field] ?? 0) + n;
    } else if (spec.keep.has(h.field)) {
      if (h.length > maxKeep) throw tooBig(spec, h, maxKeep);
      await cur.ensure(h.start, end - h.start);
      const { buf, off } = cur.at(h.start);
      if (h.field === spec.peek && h.wire === WIRE_VARINT) {
        const pOff = off + (h.payload - h.start);
        sizes!.peeked = varint(buf, pOff, pOff + h.length, 'a value', h.payload, false)[0];
      }
      out.push(Buffer.from(buf.subarray(off, off + (end - h.start))));
    }
    pos = end;
  }
  return out;
}

/**
 * The message at [from, to) of the file with only `spec`'s fields, ready for protobufjs, plus
 * the measured sizes of the data fields left out. Reads at most a window (or one kept field) at
 * a time; data fields are stepped over (varint-packed ones are scanned to count elements).
 */
export async function strip(cur: FileCursor, from: number, to: number, spec: MessageSpec, maxKeep = DEFAULT_MAX_KEEP): Promise<Stripped> {
  const out = await stripAsync(cur, from, to, spec, maxKeep);
  return { bytes: Buffer.concat(out.chunks, out.length), data: out.data };
}

/** Calls `visit` for each field of the message at [from, to); visit may read the payload itself. */
export async function forEachField(cur: FileCursor, from: number, to: number, visit: (h: FieldHeader) => Promise<void> | void): Promise<void> {
  for (let pos = from; pos < to;) {
    await cur.yieldSometimes();
    const h = await cur.header(pos, to);
    await visit(h);
    pos = h.payload + h.length;
  }
}
