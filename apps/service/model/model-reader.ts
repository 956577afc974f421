// Reads an ONNX model's summary (and the layer list the simulated backend needs) without reading
// its weights: ./onnx-walk.ts steps through the protobuf framing with positioned reads and hands
// each node, input, output and initializer (data fields left out, only measured) to protobufjs.
// Memory stays at a window (1 MiB) plus what the summary holds, whatever the file size, and all
// I/O is async, so the service's event loop is never held for more than one window's parsing.
// Single files over 2 GiB work too: the 2 GiB limit is protobuf's in-memory decoder's, not ONNX's.
//
// Weights counted in `initializerBytes`: graph initializers (inline and external), sparse
// initializers, and the tensors of Constant nodes (exporters often put weights there; to TensorRT
// they are weights all the same), in the main graph and in If/Loop/Scan bodies alike: recurrent
// models (Silero VAD) keep nearly all their weights in If branches. Only main-graph nodes count
// as nodes and layers; a call of a model-local function counts as the nodes of its body (expanded
// as TensorRT's parser inlines it: model-check.ts). External data of a body's tensors is checked
// like any other.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { onnx } from 'onnx-proto';
import type { LayerInfo, ModelSummary, TensorInfo } from '../../shared/protocol.js';
import { ServiceError } from '../api.js';
import { elemTypeBytes, elemTypeName } from './onnx-types.js';
import { NotOnnxError, walkModel } from './onnx-walk.js';
import type { DataSizes } from './onnx-wire.js';
import { WireError } from './onnx-wire.js';
import { checkExternalFiles } from './external-data.js';
import { shapeOperandUses, shapeTensorInputs } from './shape-tensors.js';
import { ModelChecker } from './model-check.js';

export interface ReadModel {
  summary: ModelSummary;
  /** Main-graph layers in the order TensorRT's parser imports them (sorted; local functions expanded). */
  layers: LayerInfo[];
  /** Where the model bends ONNX's rules and TensorRT's parser copes (nodes reordered, functions expanded): a warning each. */
  notes: string[];
}

export interface ReadModelOptions {
  /** Reading for a build: external data files must exist (inspect only lists them). */
  requireExternalData?: boolean;
}

/** TensorRT dims are int32; anything past that is a broken or hostile model. */
const MAX_DIM = 2 ** 31 - 1;
/** TensorRT's ONNX parser decodes the model file with protobuf, which stops at 2 GiB. */
const PARSER_FILE_LIMIT = 2 ** 31;

type Int64 = number | { toString(): string } | null | undefined;

/** Exact value of a protobufjs int64 (a Long, or a number when it fits). */
function toBig(v: Int64): bigint {
  if (v === null || v === undefined) return 0n;
  return typeof v === 'number' ? BigInt(Math.trunc(v)) : BigInt(v.toString());
}

/** `v` as a Number, or a bad_model error naming `field` when it does not fit exactly. */
function safeNumber(v: bigint, field: string, abs: string, min = 0n): number {
  if (v < min || v > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ServiceError('bad_model', `${abs}: ${field} is ${v}, outside the range this tool accepts (${min} to 2^53-1)`);
  }
  return Number(v);
}

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

async function statChecked(file: string): Promise<{ abs: string; size: number }> {
  if (typeof file !== 'string' || file.length === 0) throw new ServiceError('bad_input', 'a model path is required');
  if (file.includes('\0')) throw new ServiceError('bad_input', 'the model path contains a NUL byte');
  const abs = path.resolve(file);
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(abs);
  } catch (e) {
    if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') throw new ServiceError('not_found', `model file not found: ${abs}`);
    if (errno(e) === 'EACCES') throw new ServiceError('bad_model', `cannot read ${abs}: permission denied`);
    throw new ServiceError('bad_model', `cannot read ${abs}: ${(e as Error).message}`);
  }
  if (st.isDirectory()) throw new ServiceError('bad_model', `${abs} is a directory, not an ONNX model file`);
  if (!st.isFile()) throw new ServiceError('bad_model', `${abs} is not a regular file`);
  if (st.size === 0) throw new ServiceError('bad_model', `${abs} is empty (0 bytes), not an ONNX model`);
  return { abs, size: st.size };
}

/** Printable text in the first bytes: a model starts with a binary tag, so this is not one. */
async function looksLikeText(abs: string): Promise<boolean> {
  const fh = await fs.promises.open(abs, 'r');
  try {
    const buf = Buffer.alloc(512);
    const { bytesRead } = await fh.read(buf, 0, 512, 0);
    const head = buf.subarray(0, bytesRead);
    // Valid UTF-8 without control characters other than whitespace (the last char may be cut).
    const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
    return !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text) && (text.match(/\ufffd/g)?.length ?? 0) <= 1;
  } finally {
    await fh.close();
  }
}

function tensorInfo(vi: onnx.IValueInfoProto, role: 'input' | 'output', abs: string): TensorInfo {
  const name = vi.name ?? '';
  const t = vi.type;
  if (!t?.tensorType) {
    const kind = t?.sequenceType ? 'sequence' : t?.mapType ? 'map' : t?.optionalType ? 'optional' : t?.sparseTensorType ? 'sparse_tensor' : 'unknown';
    return { name, elemType: kind, shape: [] };
  }
  // An absent shape is "rank unknown", not a scalar (whose shape is present with no dims).
  if (t.tensorType.shape == null) return { name, elemType: elemTypeName(t.tensorType.elemType), shape: [], rankUnknown: true };
  const dims = t.tensorType.shape.dim ?? [];
  const shape = dims.map((d, i) => {
    const which = (d as onnx.TensorShapeProto.Dimension).value;
    if (which === 'dimValue') {
      const v = toBig(d.dimValue as Int64);
      // Caffe2 and early PyTorch exporters write -1 for "dynamic"; TensorRT's parser reads any
      // negative dim_value that way, so the model builds and the dimension is simply unknown.
      if (v < 0n) return '?';
      if (v > BigInt(MAX_DIM)) {
        throw new ServiceError('bad_model', `${abs}: ${role} "${name}" has an absurd dimension ${i}: ${v} (dimensions must be at most 2^31-1)`);
      }
      return Number(v);
    }
    if (which === 'dimParam' && d.dimParam) return d.dimParam;
    return '?';
  });
  return { name, elemType: elemTypeName(t.tensorType.elemType), shape };
}

/** Bytes of a tensor's inline data, from the sizes measured while stepping over it. */
function inlineBytes(d: DataSizes | undefined): number {
  if (!d) return 0;
  const raw = d.bytes[9] ?? 0;
  if (raw > 0) return raw;
  const size = elemTypeBytes(d.peeked);
  const c = (f: number) => d.count[f] ?? 0;
  // As onnx.proto lays them out: int32_data carries the 8/16-bit types one element per entry, and
  // the 4-bit (2-bit) types packed two (four) to an entry, so one byte each; uint64_data carries
  // uint32 too. float_data, double_data, int64_data as they are; string_data: the strings' bytes.
  const perInt32 = size > 0 && size < 4 ? Math.max(size, 1) : 4;
  const perUint64 = size === 4 ? 4 : 8;
  const typed = c(4) * 4 + c(10) * 8 + c(7) * 8 + c(11) * perUint64 + c(5) * perInt32;
  return typed + (d.bytes[6] ?? 0);
}

interface External {
  location: string;
  offset: number;
  length: number;
}

const isExternal = (t: onnx.ITensorProto) => t.dataLocation === 1 /* EXTERNAL */ || (t.externalData?.length ?? 0) > 0;

function externalOf(t: onnx.ITensorProto, abs: string): External {
  const name = t.name ?? '';
  const kv = new Map((t.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']));
  const location = kv.get('location') ?? '';
  const num = (key: 'offset' | 'length'): number | undefined => {
    const v = kv.get(key);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new ServiceError('bad_model', `${abs}: initializer "${name}" has an invalid external data ${key} "${v}" (expected a whole number of bytes)`);
    return safeNumber(BigInt(v), `initializer "${name}"'s external data ${key}`, abs);
  };
  const offset = num('offset') ?? 0;
  const declared = num('length');
  if (declared !== undefined) return { location, offset, length: declared };
  let elems = 1n;
  (t.dims ?? []).forEach((d, i) => {
    const v = toBig(d as Int64);
    if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) safeNumber(v, `initializer "${name}" dimension ${i}`, abs);
    elems *= v;
  });
  // Bits, then whole bytes rounded up: 4-bit types pack two elements a byte.
  const bytes = (elems * BigInt(Math.round(elemTypeBytes(t.dataType) * 8)) + 7n) / 8n;
  return { location, offset, length: safeNumber(bytes, `initializer "${name}"'s size in bytes`, abs) };
}

const walkFailure = (e: unknown, abs: string): unknown => {
  if (e instanceof NotOnnxError) return new ServiceError('bad_model', `${abs} is not an ONNX model: ${e.message}`);
  if (e instanceof WireError) {
    const hint = e.kind === 'truncated' ? ' (the file looks truncated)' : '';
    return new ServiceError('bad_model', `${abs} is not a valid ONNX model: ${e.message}${hint}`);
  }
  if (e instanceof ServiceError) return e;
  if (errno(e) === 'EACCES' || errno(e) === 'EPERM') return new ServiceError('bad_model', `cannot read ${abs}: permission denied`);
  if (errno(e)) return new ServiceError('bad_model', `cannot read ${abs}: ${(e as Error).message}`);
  return e;
};

/** Parses the model file; throws ServiceError('not_found' | 'bad_model') with a user-readable message. */
export async function readModel(file: string, opts: ReadModelOptions = {}): Promise<ReadModel> {
  const { abs, size } = await statChecked(file);
  if (opts.requireExternalData && size >= PARSER_FILE_LIMIT) {
    throw new ServiceError('bad_model', `${abs} is ${size} bytes: TensorRT's ONNX parser reads at most 2 GiB from the model file; store the weights as external data`);
  }

  const initNames = new Set<string>();
  let initializerBytes = 0;
  const extFiles = new Map<string, { bytes: number; tensor: string; end: number; endTensor: string }>();
  const checker = new ModelChecker(abs);
  const inputs: onnx.ValueInfoProto[] = [];
  const outputs: onnx.ValueInfoProto[] = [];
  const shapeUses = new Set<string>();

  let walked;
  try {
    walked = await walkModel(abs, {
      node(n, tensors, depth) {
        checker.node(n, depth);
        const official = !n.domain || n.domain === 'ai.onnx';
        if (official && n.opType === 'Constant') for (const d of tensors) initializerBytes += inlineBytes(d);
        // A body may use a main-graph input as a Reshape target: that input is a shape tensor too.
        if (official) for (const name of shapeOperandUses(n.opType ?? '', n.input)) shapeUses.add(name);
      },
      graph: (edge, depth) => checker.graph(edge, depth),
      bodyValue: (kind, name) => checker.bodyValue(kind, name),
      localFunction(f, tensors) {
        checker.localFunction(f);
        // A function's Constant nodes hold weights too (counted once, however often it is called).
        for (const d of tensors) initializerBytes += inlineBytes(d);
      },
      initializer(t, data, depth) {
        const name = t.name ?? '';
        // A body's initializer may shadow nothing of the main graph's inputs.
        if (depth === 0) initNames.add(name);
        const external = isExternal(t);
        checker.initializer(t, data, external, depth);
        if (!external) {
          initializerBytes += inlineBytes(data);
          return;
        }
        const ext = externalOf(t, abs);
        initializerBytes += ext.length;
        const prev = extFiles.get(ext.location);
        const end = ext.offset + ext.length;
        const further = !prev || end > prev.end;
        extFiles.set(ext.location, {
          bytes: (prev?.bytes ?? 0) + ext.length,
          tensor: prev?.tensor ?? name,
          end: further ? end : prev.end,
          endTensor: further ? name : prev.endTensor,
        });
      },
      sparseInitializer(s, tensors, depth) {
        if (depth === 0) initNames.add(s.values?.name ?? '');
        checker.sparseInitializer(s.values?.name ?? '', depth);
        for (const d of tensors) initializerBytes += inlineBytes(d);
      },
      input: (v) => {
        checker.input(v);
        inputs.push(v);
      },
      output: (v) => {
        checker.output(v);
        outputs.push(v);
      },
    });
  } catch (e) {
    if (e instanceof NotOnnxError || e instanceof WireError) {
      if (await looksLikeText(abs).catch(() => false)) throw new ServiceError('bad_model', `${abs} is not an ONNX model: it looks like a text file`);
    }
    throw walkFailure(e, abs);
  }

  // Random bytes sometimes walk as "a message with unknown fields"; a model has these.
  const irBig = toBig(walked.header.irVersion as Int64);
  if (!walked.hasGraph || irBig <= 0n || irBig > 100n) {
    const why = !walked.hasGraph ? 'no graph' : `implausible ir_version ${irBig}`;
    if (!walked.hasGraph && (await looksLikeText(abs).catch(() => false))) {
      throw new ServiceError('bad_model', `${abs} is not an ONNX model: it looks like a text file`);
    }
    throw new ServiceError('bad_model', `${abs} is not an ONNX model: ${why}`);
  }
  const opsetImports = (walked.header.opsetImport ?? []).map((o) => {
    const domain = o.domain || 'ai.onnx';
    return { domain, version: safeNumber(toBig(o.version as Int64), `opset_import "${domain}" version`, abs) };
  });

  const { pluginOps, layers, opHistogram, notes } = checker.finish(opsetImports);
  await checkExternalFiles(abs, extFiles, { requireExist: opts.requireExternalData === true });

  // Exporters before IR 4 list initializers among the graph inputs; they are weights, not inputs.
  const inputInfos = inputs.filter((i) => !initNames.has(i.name ?? '')).map((i) => tensorInfo(i, 'input', abs));
  const outputInfos = outputs.map((o) => tensorInfo(o, 'output', abs));
  const dynamicInputs = inputInfos.map((i) => ({ name: i.name, dims: i.shape.filter((d): d is string => typeof d === 'string') })).filter((d) => d.dims.length > 0);

  const summary: ModelSummary = {
    path: abs,
    fileName: path.basename(abs),
    fileBytes: walked.fileBytes,
    irVersion: Number(irBig),
    opsetImports,
    producer: { name: walked.header.producerName ?? '', version: walked.header.producerVersion ?? '' },
    graphName: walked.graphName,
    inputs: inputInfos,
    outputs: outputInfos,
    nodeCount: layers.length,
    opHistogram,
    initializerBytes,
    externalData: {
      files: [...extFiles.keys()],
      bytes: [...extFiles.values()].reduce((a, f) => a + f.bytes, 0),
    },
    dynamicInputs,
    shapeTensorInputs: shapeTensorInputs(inputInfos, shapeUses),
    ...(pluginOps.length ? { pluginOps } : {}),
    ...(notes.length ? { notes } : {}),
  };
  return { summary, layers, notes };
}

export async function inspectModel(file: string): Promise<ModelSummary> {
  return (await readModel(file)).summary;
}
