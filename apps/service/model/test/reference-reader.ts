// The reader as it was before it learned to skip weights: the whole file decoded by protobufjs.
// Kept only as a test oracle, an independent way to the same summary, so the walking reader can
// be compared with it on generated models. Changes since: Constant nodes' tensors count as
// weights (as the walking reader counts them), and so do the weights inside If/Loop/Scan bodies;
// a negative dimension is "?" (dynamic), as TensorRT's parser reads it.
//
// Large models: the file is read once into one Buffer and decoded in place. protobufjs' BufferReader
// returns `bytes` fields (raw_data, the bulk of any model) as Buffer views into that one buffer, so
// weights are never copied; we only look at their lengths, and nothing here JSON-serializes them.
// Typed weight fields (float_data etc.) do decode to JS arrays; exporters use them for small tensors.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onnx } from 'onnx-proto';
import type { LayerInfo, ModelSummary, TensorInfo } from '../../../shared/protocol.js';
import { ServiceError } from '../../api.js';
import { elemTypeBytes, elemTypeName } from '../onnx-types.js';

export interface ReadModel {
  summary: ModelSummary;
  layers: LayerInfo[];
}

export interface ReadModelOptions {
  /** Reading for a build: external data files must exist (inspect only lists them). */
  requireExternalData?: boolean;
}

/** TensorRT dims are int32; anything past that, or negative, is a broken or hostile model. */
const MAX_DIM = 2 ** 31 - 1;

type Int64 = number | { toString(): string } | null | undefined;

function toBig(v: Int64): bigint {
  if (v === null || v === undefined) return 0n;
  return typeof v === 'number' ? BigInt(Math.trunc(v)) : BigInt(v.toString());
}

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

async function readFileChecked(file: string): Promise<{ buf: Buffer; abs: string }> {
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
  // Protobuf messages cannot exceed 2 GiB; bigger models keep their weights in external data files.
  if (st.size >= 2 ** 31) {
    throw new ServiceError('bad_model', `${abs} is ${st.size} bytes: ONNX files over 2 GiB must store weights as external data`);
  }
  try {
    return { buf: await fs.promises.readFile(abs), abs };
  } catch (e) {
    if (errno(e) === 'EACCES' || errno(e) === 'EPERM') throw new ServiceError('bad_model', `cannot read ${abs}: permission denied`);
    throw new ServiceError('bad_model', `cannot read ${abs}: ${(e as Error).message}`);
  }
}

function decode(buf: Buffer, abs: string): onnx.ModelProto {
  let model: onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(buf);
  } catch (e) {
    const hint = /index out of range/.test((e as Error).message) ? ' (the file looks truncated)' : '';
    throw new ServiceError('bad_model', `${abs} is not a valid ONNX model: protobuf decoding failed: ${(e as Error).message}${hint}`);
  }
  // Random bytes and text sometimes decode as "a message with unknown fields"; a model has these.
  const ir = Number(toBig(model.irVersion as Int64));
  if (!model.graph || ir <= 0 || ir > 100) {
    throw new ServiceError('bad_model', `${abs} is not an ONNX model: ${!model.graph ? 'no graph' : `implausible IR version ${ir}`}`);
  }
  return model;
}

function tensorInfo(vi: onnx.IValueInfoProto, role: 'input' | 'output', abs: string): TensorInfo {
  const name = vi.name ?? '';
  const t = vi.type;
  if (!t?.tensorType) {
    const kind = t?.sequenceType ? 'sequence' : t?.mapType ? 'map' : t?.optionalType ? 'optional' : t?.sparseTensorType ? 'sparse_tensor' : 'unknown';
    return { name, elemType: kind, shape: [] };
  }
  const dims = t.tensorType.shape?.dim ?? [];
  const shape = dims.map((d, i) => {
    const which = (d as onnx.TensorShapeProto.Dimension).value;
    if (which === 'dimValue') {
      const v = toBig(d.dimValue as Int64);
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

function tensorBytes(t: onnx.ITensorProto): { bytes: number; external?: { location: string; length: number } } {
  if (t.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL || (t.externalData && t.externalData.length > 0)) {
    const kv = new Map((t.externalData ?? []).map((e) => [e.key ?? '', e.value ?? '']));
    const location = kv.get('location') ?? '';
    const declared = kv.get('length');
    const elems = (t.dims ?? []).reduce<number>((a, d) => a * Number(toBig(d as Int64)), 1);
    const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : Math.ceil(elems * elemTypeBytes(t.dataType));
    return { bytes: length, external: { location, length } };
  }
  if (t.rawData && t.rawData.length > 0) return { bytes: t.rawData.length };
  const size = elemTypeBytes(t.dataType);
  const typed = (t.floatData?.length ?? 0) * 4 + (t.doubleData?.length ?? 0) * 8 + (t.int64Data?.length ?? 0) * 8 + (t.uint64Data?.length ?? 0) * (size === 4 ? 4 : 8); // uint32 lives in uint64_data too
  // int32_data also carries the 8/16-bit types (one element per int32) and the 4/2-bit ones
  // (packed, one byte per int32): count their real size.
  const int32 = (t.int32Data?.length ?? 0) * (size && size < 4 ? Math.max(size, 1) : 4);
  const strings = (t.stringData ?? []).reduce((a, s) => a + s.length, 0);
  return { bytes: Math.ceil(typed + int32 + strings) };
}

function checkExternalLocation(location: string, tensor: string, abs: string): void {
  // The ONNX checker rejects these too: a model must not point outside its own folder.
  if (!location || path.isAbsolute(location) || location.split(/[\\/]/).includes('..')) {
    throw new ServiceError('bad_model', `${abs}: initializer "${tensor}" has an invalid external data location "${location}" (must be a relative path inside the model's folder)`);
  }
}

/** Parses the model file; throws ServiceError('not_found' | 'bad_model') with a user-readable message. */
export async function readModelWhole(file: string, opts: ReadModelOptions = {}): Promise<ReadModel> {
  const { buf, abs } = await readFileChecked(file);
  const model = decode(buf, abs);
  const graph = model.graph!;

  const initNames = new Set<string>();
  let initializerBytes = 0;
  const extFiles = new Map<string, { bytes: number; tensor: string }>();
  const addInitializer = (t: onnx.ITensorProto) => {
    const { bytes, external } = tensorBytes(t);
    initializerBytes += bytes;
    if (external) {
      checkExternalLocation(external.location, t.name ?? '', abs);
      const prev = extFiles.get(external.location);
      extFiles.set(external.location, { bytes: (prev?.bytes ?? 0) + external.length, tensor: prev?.tensor ?? t.name ?? '' });
    }
  };
  const addConstant = (n: onnx.INodeProto) => {
    if ((!n.domain || n.domain === 'ai.onnx') && n.opType === 'Constant') {
      for (const a of n.attribute ?? []) {
        for (const t of [a.t, ...(a.tensors ?? [])]) if (t) initializerBytes += tensorBytes(t).bytes;
      }
    }
  };
  // If/Loop/Scan bodies: their weights are built into the engine too.
  const addSubgraphs = (n: onnx.INodeProto) => {
    for (const a of n.attribute ?? []) {
      for (const g of [a.g, ...(a.graphs ?? [])]) {
        if (!g) continue;
        for (const t of g.initializer ?? []) addInitializer(t);
        for (const sn of g.node ?? []) {
          addConstant(sn);
          addSubgraphs(sn);
        }
      }
    }
  };
  for (const t of graph.initializer ?? []) {
    initNames.add(t.name ?? '');
    addInitializer(t);
  }
  for (const s of graph.sparseInitializer ?? []) {
    initNames.add(s.values?.name ?? '');
    if (s.values) initializerBytes += tensorBytes(s.values).bytes;
    if (s.indices) initializerBytes += tensorBytes(s.indices).bytes;
  }

  if (opts.requireExternalData) {
    const dir = path.dirname(abs);
    for (const [location, info] of extFiles) {
      const p = path.join(dir, location);
      let st: fs.Stats | undefined;
      try {
        st = await fs.promises.stat(p);
      } catch {
        throw new ServiceError('bad_model', `${abs}: external data file "${location}" (used by initializer "${info.tensor}") not found at ${p}`);
      }
      if (!st.isFile()) throw new ServiceError('bad_model', `${abs}: external data "${location}" is not a file`);
    }
  }

  // Exporters before IR 4 list initializers among the graph inputs; they are weights, not inputs.
  const inputs = (graph.input ?? []).filter((i) => !initNames.has(i.name ?? '')).map((i) => tensorInfo(i, 'input', abs));
  const outputs = (graph.output ?? []).map((o) => tensorInfo(o, 'output', abs));

  const opHistogram: Record<string, number> = {};
  const layers: LayerInfo[] = [];
  // Only the top-level graph: If/Loop bodies are part of their node as TensorRT sees it.
  (graph.node ?? []).forEach((n, i) => {
    const op = n.domain && n.domain !== 'ai.onnx' ? `${n.domain}.${n.opType ?? '?'}` : (n.opType ?? '?');
    opHistogram[op] = (opHistogram[op] ?? 0) + 1;
    layers.push({ name: n.name || `${op}_${i}`, op });
    addConstant(n);
    addSubgraphs(n);
  });

  const dynamicInputs = inputs.map((i) => ({ name: i.name, dims: i.shape.filter((d): d is string => typeof d === 'string') })).filter((d) => d.dims.length > 0);

  const summary: ModelSummary = {
    path: abs,
    fileName: path.basename(abs),
    fileBytes: buf.length,
    irVersion: Number(toBig(model.irVersion as Int64)),
    opsetImports: (model.opsetImport ?? []).map((o) => ({ domain: o.domain || 'ai.onnx', version: Number(toBig(o.version as Int64)) })),
    producer: { name: model.producerName ?? '', version: model.producerVersion ?? '' },
    graphName: graph.name ?? '',
    inputs,
    outputs,
    nodeCount: graph.node?.length ?? 0,
    opHistogram,
    initializerBytes,
    externalData: {
      files: [...extFiles.keys()],
      bytes: [...extFiles.values()].reduce((a, f) => a + f.bytes, 0),
    },
    dynamicInputs,
  };
  return { summary, layers };
}
