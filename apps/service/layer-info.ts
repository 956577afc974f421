// Layer information saved beside an engine (`<engine>.layers.json`), for `layers` and `compare`'s per-layer
// differences. ONE format on disk, TensorRT's own: what IEngineInspector::getEngineInformation
// (LayerInformationFormat::kJSON) returns and trtexec --exportLayerInfo writes,
//   {"Layers": [<name> | {"Name", "LayerType", "Inputs", "Outputs": [{"Name", "Format/Datatype", ...}],
//               "TacticName", "TacticValue", ...}, ...], "Bindings": [...]}
// (a layer is its bare name unless the engine was built with detailed profiling verbosity). The
// manifest's layerInfo.source says who wrote it:
// - TensorRT builds: the adapter writes the inspector's JSON as it is (native/src/trt/trt_layer_info.cc);
// - simulated builds: derived here from the model's graph (the layers the model reader found) and
//   the build options, the way a TensorRT build would differ between option sets: the precision
//   follows the precision flags, the tactic is a stable function of the layer, the optimization
//   level and the seed. Labelled "simulated" in the manifest: not what TensorRT would choose.
// ASSUMED, not observed (no real TensorRT ran here): the detailed records' field names above, as
// NVIDIA's documentation and public trtexec outputs show them; a field that is missing is left out
// of the comparison, never guessed.
import type { LayerRecord } from '../shared/build-compare.js';
import { readEngineLayers, type EngineLayers } from '../shared/engine-layers.js';
import { readBoundedText } from './engine-layers-file.js';
import type { NormalizedOptions } from '../shared/engine-manifest.js';
import type { LayerInfo } from '../shared/protocol.js';

/** FNV-1a, 32 bits: a stable small hash for the simulated tactic choice. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Ops whose simulated kernels run in reduced precision when the build allows it. */
const REDUCIBLE = /^(Conv|ConvTranspose|Gemm|MatMul|BatchNormalization|Add|Mul|Relu|Sigmoid|Softmax|LayerNormalization|Attention|MaxPool|AveragePool|GlobalAveragePool)$/;

/** Activations TensorRT fuses into the convolution or GEMM before them ("Conv_0 + Relu_1"). */
const FUSABLE_ACTIVATION = /^(Relu|Sigmoid|Tanh|Clip|LeakyRelu|HardSigmoid|Elu|Selu|Softplus|Gelu|HardSwish)$/;
const FUSES_ACTIVATION = /^(Conv|ConvTranspose|Gemm|MatMul)$/;

/** The TensorRT layer type that runs each ONNX op, as real exports name them. */
const LAYER_TYPE: Record<string, string> = {
  Conv: 'CaskConvolution',
  ConvTranspose: 'CaskDeconvolution',
  Gemm: 'CaskGemmConvolution',
  MatMul: 'CaskGemmMatrixMultiply',
  MaxPool: 'CudaPooling',
  AveragePool: 'CudaPooling',
  GlobalAveragePool: 'CaskPooling',
  Softmax: 'CaskSoftMaxV2',
  BatchNormalization: 'Scale',
  LayerNormalization: 'Normalization',
  Flatten: 'Shuffle',
  Reshape: 'Shuffle',
  Transpose: 'Shuffle',
  Squeeze: 'Shuffle',
  Unsqueeze: 'Shuffle',
  Concat: 'Concatenation',
  Relu: 'PointWiseV2',
  Sigmoid: 'PointWiseV2',
  Add: 'PointWiseV2',
  Mul: 'PointWiseV2',
  Sub: 'PointWiseV2',
  Div: 'PointWiseV2',
};

/** One layer as IEngineInspector's detailed JSON writes it (the fields this product writes). */
interface InspectorLayer {
  Name: string;
  LayerType: string;
  Inputs: Array<{ Name: string; Location: string; 'Format/Datatype': string }>;
  Outputs: Array<{ Name: string; Location: string; 'Format/Datatype': string }>;
  ParameterType?: string;
  TacticName?: string;
  TacticValue: string;
}

const formatOf = (precision: string) =>
  precision === 'fp32'
    ? 'Row major linear FP32'
    : precision === 'int8'
      ? 'Thirty-two wide channel vectorized row major Int8 format'
      : `Channel major ${precision.toUpperCase()} format where channel % 8 == 0`;

/**
 * A simulated build's layer information, in the shape of IEngineInspector's detailed JSON as real
 * trtexec exports hold it: TensorRT's layer types, an activation fused into the convolution or GEMM
 * before it ("conv + relu"), reformatting layers where a reduced-precision engine meets its FP32
 * inputs and outputs, each layer's input and output formats, tactic names and values. The model
 * reader knows no tensor shapes per layer, so "Dimensions" is left out (never invented). Labelled
 * "simulated" in the manifest: not what TensorRT would choose.
 */
export function simulatedLayerInformation(layers: readonly LayerInfo[], o: NormalizedOptions, bindings: readonly string[]): { Layers: InspectorLayer[]; Bindings: string[] } {
  const reduced = o.precision.includes('fp16') ? 'fp16' : o.precision.includes('bf16') ? 'bf16' : o.precision.includes('int8') ? 'int8' : undefined;
  const groups: LayerInfo[][] = [];
  for (const l of layers) {
    const last = groups[groups.length - 1];
    if (last && last.length === 1 && FUSES_ACTIVATION.test(last[0]!.op) && FUSABLE_ACTIVATION.test(l.op)) last.push(l);
    else groups.push([l]);
  }
  const out: InspectorLayer[] = [];
  const tensor = (name: string, precision: string) => ({ Name: name, Location: 'Device', 'Format/Datatype': formatOf(precision) });
  let prev = { name: bindings[0] ?? 'input', precision: 'fp32' };
  groups.forEach((g, i) => {
    const head = g[0]!;
    const name = g.map((l) => l.name).join(' + ');
    const precision = reduced && REDUCIBLE.test(head.op) ? reduced : 'fp32';
    if (i === 0 && precision !== 'fp32') {
      const r = `Reformatted Input Tensor 0 to ${name}`;
      out.push({
        Name: `Reformatting CopyNode for Input Tensor 0 to ${name}`,
        LayerType: 'Reformat',
        Inputs: [tensor(prev.name, 'fp32')],
        Outputs: [tensor(r, precision)],
        ParameterType: 'Reformat',
        TacticValue: '0x0000000000000000',
      });
      prev = { name: r, precision };
    }
    const hash = fnv(`${name}|${o.optLevel}|${o.simSeed ?? 1}|${precision}`);
    const type = LAYER_TYPE[head.op] ?? head.op;
    const output = `${g[g.length - 1]!.name}_out`;
    out.push({
      Name: name,
      LayerType: type,
      Inputs: [tensor(prev.name, prev.precision)],
      Outputs: [tensor(output, precision)],
      ParameterType: head.op,
      ...(type.startsWith('Cask') ? { TacticName: `sim_${head.op.toLowerCase()}_${precision}_v${hash % 8}` } : {}),
      TacticValue: `0x${hash.toString(16).padStart(16, '0')}`,
    });
    prev = { name: output, precision };
  });
  if (prev.precision !== 'fp32' && out.length) {
    const last = out[out.length - 1]!.Name;
    out.push({
      Name: `Reformatting CopyNode for Output Tensor 0 to ${last}`,
      LayerType: 'Reformat',
      Inputs: [tensor(prev.name, prev.precision)],
      Outputs: [tensor(bindings[bindings.length - 1] ?? 'output', 'fp32')],
      ParameterType: 'Reformat',
      TacticValue: '0x00000000000003e8',
    });
  }
  return { Layers: out, Bindings: [...bindings] };
}

/** Reads `<engine>.layers.json` (IEngineInspector's JSON). Undefined when absent, unreadable or not that shape. */
export function readLayerInfo(file: string): LayerRecord[] | undefined {
  let read: EngineLayers;
  try {
    read = readEngineLayers(readBoundedText(file, 'layer information'));
  } catch {
    return undefined;
  }
  return read.layers.map((l): LayerRecord => ({
    name: l.name,
    ...(l.type !== undefined ? { type: l.type } : {}),
    ...(l.tactic !== undefined ? { tactic: l.tactic } : {}),
    ...(l.format !== undefined ? { format: l.format } : {}),
    ...(l.precision !== undefined ? { precision: l.precision } : {}),
  }));
}
