// Layer information saved beside an engine (`<engine>.layers.json`), for `compare`'s per-layer
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
const REDUCIBLE = /^(Conv|ConvTranspose|Gemm|MatMul|BatchNormalization|Add|Mul|Relu|Sigmoid|Softmax|LayerNormalization|Attention)$/;

/** One layer as IEngineInspector's detailed JSON writes it (the fields this product reads and writes). */
interface InspectorLayer {
  Name: string;
  LayerType?: string;
  Inputs?: Array<{ Name?: string; 'Format/Datatype'?: string }>;
  Outputs?: Array<{ Name?: string; 'Format/Datatype'?: string }>;
  TacticName?: string;
}

/** A simulated build's layer information, in IEngineInspector's JSON shape (detailed verbosity). */
export function simulatedLayerInformation(layers: readonly LayerInfo[], o: NormalizedOptions, bindings: readonly string[]): { Layers: InspectorLayer[]; Bindings: string[] } {
  const reduced = o.precision.includes('fp16') ? 'fp16' : o.precision.includes('bf16') ? 'bf16' : o.precision.includes('int8') ? 'int8' : undefined;
  return {
    Layers: layers.map((l) => {
      const precision = reduced && REDUCIBLE.test(l.op) ? reduced : 'fp32';
      const variant = fnv(`${l.name}|${o.optLevel}|${o.simSeed ?? 1}|${precision}`) % 8;
      const format =
        precision === 'fp32'
          ? 'Row major linear FP32'
          : precision === 'int8'
            ? 'Channel major INT8 format where channel % 32 == 0'
            : `Channel major ${precision.toUpperCase()} format where channel % 8 == 0`;
      return { Name: l.name, LayerType: l.op, Outputs: [{ Name: `${l.name}_out`, 'Format/Datatype': format }], TacticName: `sim_${l.op.toLowerCase()}_${precision}_v${variant}` };
    }),
    Bindings: [...bindings],
  };
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
