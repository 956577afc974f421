// Generated IEngineInspector layer JSON (10.x shape, detailed verbosity) and a matching trtexec
// --exportProfile, of any size: for the Engine view's benchmark and e2e spec. Deterministic.

const FORMATS: Record<string, string> = {
  fp32: 'Row major linear FP32',
  fp16: 'Channel major FP16 format where channel % 8 == 0',
  int8: 'Thirty-two wide channel vectorized row major Int8 format',
};
const TYPES = ['CaskConvolution', 'CaskGemmConvolution', 'PointWiseV2', 'Shuffle', 'CaskPooling', 'Reformat'];

export interface GeneratedEngine {
  layers: string;
  profile: string;
}

/** `count` layers; every `fp32Every`-th runs FP32, the rest `precision`; `seed` shifts tactics. */
export function generateEngineFiles(count: number, opts: { precision?: 'fp16' | 'int8' | 'fp32'; fp32Every?: number; seed?: number } = {}): GeneratedEngine {
  const precision = opts.precision ?? 'fp16';
  const every = opts.fp32Every ?? 7;
  const seed = opts.seed ?? 1;
  const Layers = [];
  const profile: Array<Record<string, number | string>> = [{ count: 100 }];
  let prev = 'input';
  for (let i = 0; i < count; i++) {
    const type = TYPES[i % TYPES.length]!;
    const p = i % every === every - 1 ? 'fp32' : precision;
    const name = type === 'CaskConvolution' ? `/backbone/stage${(i / 50) | 0}/conv_${i} + /backbone/stage${(i / 50) | 0}/relu_${i}` : `/backbone/layer_${i}`;
    const out = `t_${i}`;
    Layers.push({
      Name: name,
      LayerType: type,
      Inputs: [{ Name: prev, Location: 'Device', Dimensions: [1, 64, 56, 56], 'Format/Datatype': FORMATS.fp16 }],
      Outputs: [{ Name: out, Location: 'Device', Dimensions: [1, 64, 56, 56], 'Format/Datatype': FORMATS[p] }],
      ParameterType: type,
      TacticName: `sm90_xmma_${type.toLowerCase()}_${p}_${(i * 7 + seed) % 13}`,
      TacticValue: `0x${((i * 2654435761 + seed) >>> 0).toString(16).padStart(16, '0')}`,
    });
    const ms = 0.001 + ((i * 37 + seed) % 101) / 1000;
    profile.push({ name, timeMs: ms * 100, averageMs: ms, medianMs: ms, percentage: 0 });
    prev = out;
  }
  // trtexec's "percentage": each layer's share of the summed time.
  const total = profile.slice(1).reduce((a, e) => a + (e.timeMs as number), 0);
  for (const e of profile.slice(1)) e.percentage = ((e.timeMs as number) / total) * 100;
  return { layers: JSON.stringify({ Layers, Bindings: ['input', prev] }), profile: JSON.stringify(profile) };
}
