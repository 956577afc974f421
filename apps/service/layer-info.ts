// Layer information saved beside an engine (`<engine>.layers.json`), for `compare`'s per-layer
// differences. Two sources:
// - simulated builds: derived here from the model's graph (the layers the model reader found) and
//   the build options, the way a TensorRT build would differ between option sets: the precision
//   follows the precision flags, the tactic is a stable function of the layer, the optimization
//   level and the seed. It is labelled "simulated": not what TensorRT would choose.
// - TensorRT: IEngineInspector's JSON (ILayerInformation, LayerInformationFormat::kJSON:
//   {"Layers": [{"Name", "LayerType", "TacticName", "Outputs": [{"Format/Datatype"}]}, ...]}).
//   The adapter does not write that file yet (native/src/trt/ is another change in progress), so
//   for TensorRT builds layerInfo is null until it does; readLayerInfo already reads that format.
import * as fs from 'node:fs';
import type { LayerRecord } from '../shared/build-compare.js';
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

export function simulatedLayers(layers: readonly LayerInfo[], o: NormalizedOptions): LayerRecord[] {
  const reduced = o.precision.includes('fp16') ? 'fp16' : o.precision.includes('bf16') ? 'bf16' : o.precision.includes('int8') ? 'int8' : undefined;
  return layers.map((l) => {
    const precision = reduced && REDUCIBLE.test(l.op) ? reduced : 'fp32';
    const variant = fnv(`${l.name}|${o.optLevel}|${o.simSeed ?? 1}|${precision}`) % 8;
    const format = precision === 'fp32' ? 'Row major linear FP32' : precision === 'int8' ? 'Channel major INT8 format where channel % 32 == 0' : `Channel major ${precision.toUpperCase()} format where channel % 8 == 0`;
    return { name: l.name, type: l.op, precision, tactic: `sim_${l.op.toLowerCase()}_${precision}_v${variant}`, format };
  });
}

export interface LayerInfoFile {
  source: 'simulated' | 'IEngineInspector';
  layers: LayerRecord[];
}

/** Reads `<engine>.layers.json`: this tool's form, or IEngineInspector's JSON. Undefined when absent or unreadable. */
export function readLayerInfo(file: string): LayerRecord[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (!json || typeof json !== 'object') return undefined;
  const o = json as { layers?: unknown; Layers?: unknown };
  if (Array.isArray(o.layers)) {
    return o.layers.filter((l): l is LayerRecord => !!l && typeof (l as LayerRecord).name === 'string');
  }
  if (Array.isArray(o.Layers)) {
    // IEngineInspector: with profiling verbosity below detailed, layers are bare name strings.
    return o.Layers.map((l: unknown): LayerRecord => {
      if (typeof l === 'string') return { name: l };
      const x = l as { Name?: string; LayerType?: string; TacticName?: string; Outputs?: Array<{ 'Format/Datatype'?: string }> };
      const fmt = x.Outputs?.[0]?.['Format/Datatype'];
      return { name: String(x.Name ?? ''), type: x.LayerType, tactic: x.TacticName, format: fmt, precision: fmt ? /FP16|Half/i.test(fmt) ? 'fp16' : /INT8/i.test(fmt) ? 'int8' : /BF16/i.test(fmt) ? 'bf16' : /FP8/i.test(fmt) ? 'fp8' : 'fp32' : undefined };
    });
  }
  return undefined;
}
