// The ONNX structure the model reader walks: which fields of ModelProto and GraphProto it
// descends into, which sub-messages it decodes with protobufjs (onnx-proto), and which it steps
// over. Field numbers are onnx.proto's (stable since IR 3; new fields only ever get new numbers).
import * as fs from 'node:fs';
import { onnx } from 'onnx-proto';
import { type DataSizes, FileCursor, type MessageSpec, WIRE_LEN, WIRE_VARINT, WireError, forEachField, strip } from './onnx-wire.js';

const set = (...n: number[]): ReadonlySet<number> => new Set(n);

/** TensorProto without its data: data fields measured (raw_data bytes, typed element counts). */
export const TENSOR: MessageSpec = {
  name: 'TensorProto',
  // dims, data_type, name, external_data, data_location
  keep: set(1, 2, 8, 13, 14),
  // float_data, int32_data, string_data, int64_data, raw_data, double_data, uint64_data
  data: { 4: 'fixed32', 5: 'varint', 6: 'bytes', 7: 'varint', 9: 'bytes', 10: 'fixed64', 11: 'varint' },
  peek: 2,
};
/** values, indices (tensors), dims. */
export const SPARSE: MessageSpec = { name: 'SparseTensorProto', keep: set(3), sub: { 1: TENSOR, 2: TENSOR } };
/** name, type; t, tensors, sparse_tensor, sparse_tensors. Subgraphs (g, graphs) are stepped over here and walked on their own (walkSubgraphs). */
const ATTRIBUTE: MessageSpec = { name: 'AttributeProto', keep: set(1, 20), sub: { 5: TENSOR, 10: TENSOR, 22: SPARSE, 23: SPARSE } };
/** input, output, name, op_type, domain; attributes (for Constant nodes' tensors). */
export const NODE: MessageSpec = { name: 'NodeProto', keep: set(1, 2, 3, 4, 7), sub: { 5: ATTRIBUTE } };
/** name, type. */
export const VALUE_INFO: MessageSpec = { name: 'ValueInfoProto', keep: set(1, 2) };
/**
 * A model-local function (ModelProto.functions): name, input, output, attribute, opset_import,
 * domain; its nodes stripped like the graph's. attribute_proto (11), value_info (12) and overload
 * (13) are newer than onnx-proto's schema and not needed: left out.
 */
export const FUNCTION: MessageSpec = { name: 'FunctionProto', keep: set(1, 4, 5, 6, 9, 10), sub: { 7: NODE } };

/** ModelProto fields and the wire type each must have; the first field of a model is one of these. */
const MODEL_FIELDS: Record<number, number> = {
  1: WIRE_VARINT,
  2: WIRE_LEN,
  3: WIRE_LEN,
  4: WIRE_LEN,
  5: WIRE_VARINT,
  6: WIRE_LEN,
  7: WIRE_LEN,
  8: WIRE_LEN,
  14: WIRE_LEN,
  20: WIRE_LEN,
  25: WIRE_LEN,
};
/** ir_version, producer_name, producer_version, opset_import: decoded; the graph and the functions are walked; everything else is skipped. */
const MODEL_KEEP = set(1, 2, 3, 8);

/**
 * What the walk meets. `depth` is 0 in the main graph and n inside n levels of If/Loop/Scan
 * bodies (attribute subgraphs), whose nodes and initializers are visited too, right after the
 * node that holds them; their inputs and outputs are not (they are not the model's).
 */
export interface ModelVisitor {
  node(n: onnx.NodeProto, tensors: DataSizes[], depth: number): void;
  initializer(t: onnx.TensorProto, data: DataSizes, depth: number): void;
  sparseInitializer(s: onnx.SparseTensorProto, tensors: DataSizes[], depth: number): void;
  input(v: onnx.ValueInfoProto): void;
  output(v: onnx.ValueInfoProto): void;
  /**
   * A graph begins or ends: the main graph at depth 0, a body at depth n (its node was the last
   * one visited at depth n - 1). A body's own inputs and outputs come as `bodyValue`, by name.
   */
  graph?(edge: 'start' | 'end', depth: number): void;
  bodyValue?(kind: 'input' | 'output', name: string, depth: number): void;
  /** A model-local function (ModelProto.functions), its nodes' tensors measured, not kept. */
  localFunction?(f: onnx.FunctionProto, tensors: DataSizes[]): void;
}

/**
 * Deepest subgraph nesting walked. Real models nest a few levels (a Loop in an If); a file that
 * nests hundreds is built to exhaust the stack of whoever reads it.
 */
export const MAX_SUBGRAPH_DEPTH = 32;

const GRAPH_ATTRIBUTE_TYPES: ReadonlySet<number> = set(onnx.AttributeProto.AttributeType.GRAPH, onnx.AttributeProto.AttributeType.GRAPHS);

export interface WalkedModel {
  /** ir_version, producer, opset_import (graph and everything else left out). */
  header: onnx.ModelProto;
  graphName: string;
  hasGraph: boolean;
  fileBytes: number;
}

/** A decoding failure of a stripped sub-message, located in the file. */
function decodeAt<T>(what: string, at: number, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    throw new WireError('malformed', `the ${what} at byte ${at} does not decode: ${(e as Error).message}`);
  }
}

/** Thrown when the file's first field cannot start an ONNX ModelProto. */
export class NotOnnxError extends Error {}

/**
 * Walks the subgraphs held by the node at [from, to): AttributeProto.g (6) and .graphs (11).
 * Only the attributes' framing is read here; each body is walked like the main graph.
 */
async function walkSubgraphs(cur: FileCursor, from: number, to: number, v: ModelVisitor, depth: number): Promise<void> {
  if (depth > MAX_SUBGRAPH_DEPTH)
    throw new WireError('malformed', `the node at byte ${from} has subgraphs nested more than ${MAX_SUBGRAPH_DEPTH} deep: not a plausible ONNX model`);
  await forEachField(cur, from, to, async (attr) => {
    if (attr.field !== 5 || attr.wire !== WIRE_LEN) return;
    await forEachField(cur, attr.payload, attr.payload + attr.length, async (f) => {
      if ((f.field === 6 || f.field === 11) && f.wire === WIRE_LEN) await walkGraph(cur, f.payload, f.payload + f.length, v, depth);
    });
  });
}

async function walkGraph(cur: FileCursor, from: number, to: number, v: ModelVisitor, depth = 0): Promise<string> {
  let graphName = '';
  v.graph?.('start', depth);
  await forEachField(cur, from, to, async (h) => {
    const end = h.payload + h.length;
    if (h.wire !== WIRE_LEN) return; // every field the reader needs is length-delimited; others skipped
    switch (h.field) {
      case 1: {
        const s = await strip(cur, h.payload, end, NODE);
        const n = decodeAt('node', h.start, () => onnx.NodeProto.decode(s.bytes));
        v.node(n, s.data, depth);
        // The stripped node kept each attribute's type: only If/Loop/Scan-like nodes are read again.
        if (n.attribute.some((a) => GRAPH_ATTRIBUTE_TYPES.has(a.type ?? 0) || !a.type)) await walkSubgraphs(cur, h.payload, end, v, depth + 1);
        return;
      }
      case 2: {
        await cur.ensure(h.payload, Math.min(h.length, 1 << 16));
        const { buf, off } = cur.at(h.payload);
        graphName = buf.toString('utf8', off, off + Math.min(h.length, 1 << 16));
        return;
      }
      case 5: {
        const s = await strip(cur, h.payload, end, TENSOR);
        v.initializer(
          decodeAt('initializer', h.start, () => onnx.TensorProto.decode(s.bytes)),
          s.data[0],
          depth,
        );
        return;
      }
      case 15: {
        const s = await strip(cur, h.payload, end, SPARSE);
        v.sparseInitializer(
          decodeAt('sparse initializer', h.start, () => onnx.SparseTensorProto.decode(s.bytes)),
          s.data,
          depth,
        );
        return;
      }
      case 11:
      case 12: {
        // A body's inputs and outputs are not the model's: only their names, for the body's check.
        if (depth > 0 && !v.bodyValue) return;
        const s = await strip(cur, h.payload, end, VALUE_INFO);
        const vi = decodeAt(h.field === 11 ? 'graph input' : 'graph output', h.start, () => onnx.ValueInfoProto.decode(s.bytes));
        if (depth > 0) v.bodyValue!(h.field === 11 ? 'input' : 'output', vi.name ?? '', depth);
        else if (h.field === 11) v.input(vi);
        else v.output(vi);
        return;
      }
      default:
      // doc_string, value_info, quantization annotations, metadata: not part of the summary.
    }
  });
  v.graph?.('end', depth);
  return graphName;
}

/**
 * Walks the model file: the graph's nodes, initializers and inputs/outputs go to `visitor` one by
 * one (in file order), weights are stepped over. Throws NotOnnxError when the first bytes cannot
 * begin a ModelProto and WireError when the framing breaks later.
 */
export async function walkModel(file: string, visitor: ModelVisitor, opts: { window?: number } = {}): Promise<WalkedModel> {
  // O_NONBLOCK and a regular-file check on the descriptor: a FIFO swapped in after the model was
  // looked at must end in an error, not wait for a writer forever (issue 40).
  const fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file (it changed after it was checked)`), { code: 'ENOTREG' });
    const size = st.size;
    const cur = new FileCursor(fh, size, opts.window);
    const header: Buffer[] = [];
    let graphName = '';
    let hasGraph = false;
    let first = true;
    await forEachField(cur, 0, size, async (h) => {
      const want = MODEL_FIELDS[h.field];
      if (first && want !== h.wire) {
        throw new NotOnnxError(`its first bytes are not an ONNX ModelProto (field ${h.field}, wire type ${h.wire})`);
      }
      first = false;
      if (want !== undefined && want !== h.wire) {
        throw new WireError('malformed', `ModelProto field ${h.field} at byte ${h.start} has wire type ${h.wire}, expected ${want}`);
      }
      if (h.field === 7) {
        hasGraph = true;
        graphName = await walkGraph(cur, h.payload, h.payload + h.length, visitor);
      } else if (h.field === 25 && h.wire === WIRE_LEN && visitor.localFunction) {
        const s = await strip(cur, h.payload, h.payload + h.length, FUNCTION);
        visitor.localFunction(
          decodeAt('local function', h.start, () => onnx.FunctionProto.decode(s.bytes)),
          s.data,
        );
      } else if (MODEL_KEEP.has(h.field)) {
        const n = h.payload + h.length - h.start;
        if (n > 1 << 20) throw new WireError('malformed', `ModelProto field ${h.field} at byte ${h.start} is ${n} bytes: not a plausible ONNX model`);
        await cur.ensure(h.start, n);
        const { buf, off } = cur.at(h.start);
        header.push(Buffer.from(buf.subarray(off, off + n)));
      }
    }).catch((e) => {
      // A first field that parses but breaks framing is as much "not a model" as a bad first tag.
      if (first && e instanceof WireError) throw new NotOnnxError(`its first bytes are not an ONNX ModelProto (${e.message})`);
      throw e;
    });
    const decoded = decodeAt('model header', 0, () => onnx.ModelProto.decode(Buffer.concat(header)));
    return { header: decoded, graphName, hasGraph, fileBytes: size };
  } finally {
    await fh.close();
  }
}
