// The layer reader on files shaped as TensorRT writes them (10.x "Bindings", 11.x "I/O Tensors",
// names only), trtexec's profile, the precision check, the comparison, and hostile input.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPrecision, compareEngineLayers, LAYER_FILE_LIMITS, LayerFileError, precisionCheckText, precisionOfFormat, readEngineLayers } from '../engine-layers.js';

const io = (name: string, dims: number[], fmt: string) => ({ Name: name, Location: 'Device', Dimensions: dims, 'Format/Datatype': fmt });
/** A detailed 10.x export of a small fp16 network, with the fields trtexec writes. */
function detailed10() {
  return {
    Layers: [
      {
        Name: 'Reformatting CopyNode for Input Tensor 0 to conv1 + relu1',
        LayerType: 'Reformat',
        Inputs: [io('x', [1, 3, 8, 8], 'Row major linear FP32')],
        Outputs: [io('x_r', [1, 3, 8, 8], 'Channel major FP16 format where channel % 8 == 0')],
        ParameterType: 'Reformat',
        Origin: 'REFORMAT',
        TacticValue: '0x0000000000000000',
      },
      {
        Name: 'conv1 + relu1',
        LayerType: 'CaskConvolution',
        Inputs: [io('x_r', [1, 3, 8, 8], 'Channel major FP16 format where channel % 8 == 0')],
        Outputs: [io('c1', [1, 8, 8, 8], 'Channel major FP16 format where channel % 8 == 0')],
        ParameterType: 'Convolution',
        Weights: { Type: 'Half', Count: 216 },
        TacticName: 'sm80_xmma_fprop_f16',
        TacticValue: '0x1',
      },
      {
        Name: 'softmax',
        LayerType: 'CaskSoftMaxV2',
        Inputs: [io('c1', [1, 8, 8, 8], 'Channel major FP16 format where channel % 8 == 0')],
        Outputs: [io('y', [1, 8, 8, 8], 'Row major linear FP32')],
        TacticValue: '0x2',
      },
      { Name: 'argmax', LayerType: 'TopK', Inputs: [], Outputs: [io('idx', [1, 1], 'Row major linear Int32')] },
    ],
    Bindings: ['x', 'y'],
  };
}
const profile = JSON.stringify([
  { count: 10 },
  { name: 'Reformatting CopyNode for Input Tensor 0 to conv1 + relu1', timeMs: 0.5, averageMs: 0.05, medianMs: 0.05, percentage: 10 },
  { name: 'conv1 + relu1', timeMs: 3, averageMs: 0.3, medianMs: 0.3, percentage: 60 },
  { name: 'softmax', timeMs: 1.25, averageMs: 0.125, medianMs: 0.125, percentage: 25 },
  { name: 'argmax', timeMs: 0.25, averageMs: 0.025, medianMs: 0.025, percentage: 5 },
]);

describe('readEngineLayers', () => {
  it('reads a detailed 10.x export: type, precision of the first output, format, tactic, fused ops, weights', () => {
    const r = readEngineLayers(JSON.stringify(detailed10()));
    expect(r.schema).toBe('10.x');
    expect(r.detailed).toBe(true);
    expect(r.io.map((t) => t.name)).toEqual(['x', 'y']);
    const conv = r.layers[1]!;
    expect(conv).toMatchObject({
      name: 'conv1 + relu1',
      type: 'CaskConvolution',
      precision: 'fp16',
      tactic: 'sm80_xmma_fprop_f16',
      fused: ['conv1', 'relu1'],
      weights: { type: 'Half', count: 216 },
    });
    expect(conv.inputs[0]).toEqual({ name: 'x_r', dimensions: [1, 3, 8, 8], format: 'Channel major FP16 format where channel % 8 == 0', precision: 'fp16' });
    expect(r.layers[2]!.precision).toBe('fp32');
    expect(r.layers[3]!.precision).toBe('int32');
    // A reformatting layer's name is one operation, and an untimed file has no times.
    expect(r.layers[0]!.fused).toBeUndefined();
    expect(r.layers[0]!.timeMs).toBeUndefined();
    expect(r.summary).toEqual({ count: 4, byPrecision: { fp16: 2, fp32: 1, int32: 1 }, byType: { Reformat: 1, CaskConvolution: 1, CaskSoftMaxV2: 1, TopK: 1 }, slowest: [] });
  });

  it("carries the profile's figures exactly; they sum to totalMs; slowest first", () => {
    const r = readEngineLayers(JSON.stringify(detailed10()), profile);
    expect(r.layers.map((l) => l.timeMs)).toEqual([0.5, 3, 1.25, 0.25]);
    expect(r.layers.map((l) => l.percent)).toEqual([10, 60, 25, 5]);
    expect(r.layers[1]!.medianMs).toBe(0.3);
    expect(r.summary.totalMs).toBe(5);
    expect(r.summary.slowest.map((s) => s.name)).toEqual(['conv1 + relu1', 'softmax', 'Reformatting CopyNode for Input Tensor 0 to conv1 + relu1', 'argmax']);
  });

  it('reads an 11.x export (I/O tensor objects instead of Bindings)', () => {
    const j = {
      ...detailed10(),
      Bindings: undefined,
      'I/O Tensors': [
        { Name: 'x', IOMode: 'Input', DataType: 'Float', Dimensions: [1, 3, 8, 8], Location: 'Device', IsShapeInferenceIO: false },
        { Name: 'y', IOMode: 'Output', DataType: 'Float', Dimensions: [1, 8, 8, 8] },
      ],
    };
    const r = readEngineLayers(JSON.stringify(j));
    expect(r.schema).toBe('11.x');
    expect(r.io).toEqual([
      { name: 'x', mode: 'input', dataType: 'Float', dimensions: [1, 3, 8, 8] },
      { name: 'y', mode: 'output', dataType: 'Float', dimensions: [1, 8, 8, 8] },
    ]);
    expect(r.layers).toHaveLength(4);
  });

  it('reads names only (below detailed verbosity) without inventing fields', () => {
    const r = readEngineLayers(JSON.stringify({ Layers: ['conv1 + relu1', 'fc'], Bindings: ['x', 'y'] }));
    expect(r.detailed).toBe(false);
    expect(r.layers).toEqual([
      { name: 'conv1 + relu1', inputs: [], outputs: [], fused: ['conv1', 'relu1'] },
      { name: 'fc', inputs: [], outputs: [] },
    ]);
    expect(r.summary.byPrecision).toEqual({});
  });

  it('notes profile entries no layer has', () => {
    const p = JSON.stringify([{ count: 1 }, { name: 'elsewhere', timeMs: 1 }, { name: 'softmax', timeMs: 2 }]);
    expect(readEngineLayers(JSON.stringify(detailed10()), p).summary.profileOnly).toEqual(['elsewhere']);
  });
});

describe('precisionOfFormat', () => {
  it.each([
    ['Row major linear FP32', 'fp32'],
    ['Channel major FP16 format where channel % 8 == 0', 'fp16'],
    ['Four wide channel vectorized row major Int8 format', 'int8'],
    ['Thirty-two wide channel vectorized row major FP16 format', 'fp16'],
    ['Row major linear BF16 format', 'bf16'],
    ['Row major linear FP8 format', 'fp8'],
    ['Row major linear Int4 format', 'int4'],
    ['Row major linear FP4 format', 'fp4'],
    ['Row major linear Int64', 'int64'],
    ['Row major linear Int32', 'int32'],
    ['Row major linear Bool', 'bool'],
    ['Row major linear FP32 format (kLINEAR)', 'fp32'],
    ['Half', 'fp16'],
    ['Float', 'fp32'],
  ])('%s → %s', (f, p) => expect(precisionOfFormat(f)).toBe(p));
  it('names nothing it cannot tell', () => expect(precisionOfFormat('Some new format')).toBeUndefined());
});

describe('the precision check', () => {
  it('counts compute layers wider than asked; data movement and integer outputs are not judged', () => {
    const r = readEngineLayers(JSON.stringify(detailed10()));
    const c = checkPrecision(r.layers, 'fp16');
    expect(c).toEqual({ expected: 'fp16', checked: 2, asAsked: 1, wider: [{ name: 'softmax', type: 'CaskSoftMaxV2', precision: 'fp32' }] });
    expect(precisionCheckText(c)).toBe('1 of 2 compute layers run FP16; 1 run FP32: softmax');
    expect(checkPrecision(r.layers, 'fp32').wider).toEqual([]);
    expect(() => checkPrecision(r.layers, 'int32')).toThrow(LayerFileError);
  });
});

describe('compareEngineLayers', () => {
  it('names exactly the layers whose precision changed, layers only in one, and time ratios', () => {
    const a = readEngineLayers(JSON.stringify(detailed10()), profile).layers;
    const j = detailed10();
    j.Layers[2]!.Outputs = [io('y', [1, 8, 8, 8], 'Channel major FP16 format where channel % 8 == 0')];
    j.Layers.pop();
    const p2 = JSON.stringify([{ count: 1 }, { name: 'conv1 + relu1', timeMs: 1.5 }, { name: 'softmax', timeMs: 2.5 }]);
    const changes = compareEngineLayers(a, readEngineLayers(JSON.stringify(j), p2).layers);
    expect(changes.filter((c) => c.what.includes('precision')).map((c) => c.name)).toEqual(['softmax']);
    expect(changes.find((c) => c.name === 'argmax')!.what).toEqual(['only in a']);
    expect(changes.find((c) => c.name === 'conv1 + relu1')!.timeRatio).toBe(0.5);
    expect(changes.find((c) => c.name === 'softmax')!.timeRatio).toBe(2);
  });
});

describe('hostile files get a clear error, never a hang', () => {
  it.each([
    ['not JSON', '{"Layers": [', /not JSON/],
    ['the wrong shape', '{"layers": []}', /expected IEngineInspector's JSON/],
    ['a layer that is a number', '{"Layers": [3]}', /layer 0: neither a name nor an object/],
    ['deep nesting', `{"Layers": [${'['.repeat(100_000)}${']'.repeat(100_000)}]}`, /nested deeper than 64 levels/],
  ])('%s', (_name, text, says) => {
    expect(() => readEngineLayers(text)).toThrow(says);
  });
  it('brackets inside strings do not count as nesting', () => {
    const name = '['.repeat(1000) + '\\"{';
    expect(readEngineLayers(`{"Layers": ["${name}"]}`).layers[0]!.name).toBe('['.repeat(1000) + '"{');
  });
  it('a profile that is not an exported profile', () => {
    expect(() => readEngineLayers(JSON.stringify(detailed10()), '{"a": 1}')).toThrow(/--exportProfile array/);
    expect(() => readEngineLayers(JSON.stringify(detailed10()), '[{"name": "x"}]')).toThrow(/entry 0 has no "name" and "timeMs"/);
  });
  it('a text longer than the limit is refused before parsing', () => {
    const big = { length: LAYER_FILE_LIMITS.maxChars + 1 } as unknown as string;
    expect(() => readEngineLayers(big)).toThrow(/characters, more than/);
  });
});

// Real trtexec exports (NVIDIA kept some for TREx before TensorRT 11.1: an A100's and an RTX 3090's).
// They are public but not ours to commit, so this runs where a folder of them is named:
// TBS_TREX_EXAMPLES=<folder> (searched for *.graph.json with an optional *.profile.json beside).
const trexDir = process.env.TBS_TREX_EXAMPLES;
describe.skipIf(!trexDir)(`real trtexec exports in ${trexDir ?? '(TBS_TREX_EXAMPLES not set: skipped)'}`, () => {
  const graphs: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.graph.json')) graphs.push(p);
    }
  };
  if (trexDir) walk(trexDir);
  it('found some', () => expect(graphs.length).toBeGreaterThan(0));
  for (const g of graphs) {
    it(path.relative(trexDir!, g), () => {
      const raw = JSON.parse(fs.readFileSync(g, 'utf8')) as { Layers: Array<string | { Name: string; Outputs?: Array<{ 'Format/Datatype'?: string }> }> };
      const profileFile = g.replace(/\.graph\.json$/, '.profile.json');
      const profileText = fs.existsSync(profileFile) ? fs.readFileSync(profileFile, 'utf8') : undefined;
      const r = readEngineLayers(JSON.stringify(raw), profileText);
      // Every layer listed, with the precision its first output names.
      expect(r.layers.map((l) => l.name)).toEqual(raw.Layers.map((l) => (typeof l === 'string' ? l : l.Name)));
      raw.Layers.forEach((l, i) => {
        const fmt = typeof l === 'string' ? undefined : l.Outputs?.[0]?.['Format/Datatype'];
        expect(r.layers[i]!.precision).toBe(fmt === undefined ? undefined : precisionOfFormat(fmt));
        if (fmt !== undefined) expect(r.layers[i]!.precision, fmt).toBeDefined();
      });
      if (profileText) {
        const entries = (JSON.parse(profileText) as Array<{ name?: string; timeMs?: number }>).filter((e) => e.name !== undefined);
        const byName = new Map(entries.map((e) => [e.name!, e.timeMs!]));
        for (const l of r.layers) if (byName.has(l.name)) expect(l.timeMs).toBe(byName.get(l.name));
        const sum = r.layers.reduce((s, l) => s + (l.timeMs ?? 0), 0);
        expect(r.summary.totalMs).toBeCloseTo(sum, 12);
      }
    });
  }
});
