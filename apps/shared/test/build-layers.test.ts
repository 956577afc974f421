// The precision check of a build: what it asked for, and the layers that run wider.
import { describe, expect, it } from 'vitest';
import { buildLayersFacts, buildLayersText, expectedPrecision } from '../build-layers.js';
import { readEngineLayers } from '../engine-layers.js';

const t = (elemType: string) => ({ name: 'x', elemType, shape: [1] });
const out = (name: string, type: string, fmt: string) => ({ Name: name, LayerType: type, Outputs: [{ Name: `${name}_o`, 'Format/Datatype': fmt }] });
const FP16 = 'Channel major FP16 format where channel % 8 == 0';
const FP32 = 'Row major linear FP32';

describe('expectedPrecision', () => {
  it('weakly typed: the widest precision flag; none asks for nothing', () => {
    expect(expectedPrecision({ precision: ['fp16'] }, undefined, false)).toBe('fp16');
    expect(expectedPrecision({ precision: ['int8', 'fp16'] }, undefined, false)).toBe('fp16');
    expect(expectedPrecision({ precision: ['int8'] }, undefined, false)).toBe('int8');
    expect(expectedPrecision({}, { inputs: [t('float16')] }, false)).toBeUndefined();
  });
  it("strongly typed (the option, or implied on TensorRT 11): the model's float inputs decide", () => {
    expect(expectedPrecision({ stronglyTyped: true }, { inputs: [t('float16'), t('int64')] }, false)).toBe('fp16');
    expect(expectedPrecision({}, { inputs: [t('bfloat16')] }, true)).toBe('bf16');
    expect(expectedPrecision({}, { inputs: [t('float32')] }, true)).toBeUndefined();
    expect(expectedPrecision({}, { inputs: [t('float16'), t('float32')] }, true)).toBeUndefined();
    expect(expectedPrecision({}, { inputs: [t('int64')] }, true)).toBeUndefined();
  });
});

describe('buildLayersFacts and its text', () => {
  const read = readEngineLayers(
    JSON.stringify({
      Layers: [
        out('conv', 'CaskConvolution', FP16),
        out('tanh', 'PointWiseV2', FP32),
        out('shuffle', 'Shuffle', FP32),
        out('exp', 'Unary', FP32),
        out('fc', 'CaskGemmConvolution', FP16),
      ],
      Bindings: ['x', 'y'],
    }),
  );
  it('counts the compute layers that run wider than asked, data movement left out', () => {
    const f = buildLayersFacts(read, 'fp16');
    expect(f).toEqual({
      count: 5,
      byPrecision: { fp16: 2, fp32: 3 },
      expected: 'fp16',
      checked: 4,
      asAsked: 2,
      wider: 2,
      widerByPrecision: { fp32: 2 },
      widerNames: ['tanh', 'exp'],
    });
    expect(buildLayersText(f)).toBe('Layers: 2 of 4 compute layers run FP16; 2 run FP32: tanh, exp');
    expect(buildLayersText(f, 1)).toBe('Layers: 2 of 4 compute layers run FP16; 2 run FP32: tanh, … (1 more)');
  });
  it('no expectation: the count per precision only; all as asked says so', () => {
    const none = buildLayersFacts(read, undefined);
    expect(none).toEqual({ count: 5, byPrecision: { fp16: 2, fp32: 3 } });
    expect(buildLayersText(none)).toBe('Layers: 5 layers: 3 FP32, 2 FP16');
    expect(buildLayersText(buildLayersFacts(read, 'fp32'))).toBe('Layers: all 4 compute layers run FP32 or narrower (5 layers: 3 FP32, 2 FP16)');
  });
  it('names at most 20 wider layers and counts the rest', () => {
    const many = readEngineLayers(JSON.stringify({ Layers: Array.from({ length: 30 }, (_, i) => out(`l${i}`, 'Unary', FP32)), Bindings: [] }));
    const f = buildLayersFacts(many, 'fp16');
    expect(f.wider).toBe(30);
    expect(f.widerNames).toHaveLength(20);
    expect(buildLayersText(f)).toMatch(/^Layers: 0 of 30 compute layers run FP16; 30 run FP32: l0, l1, l2, l3, l4, … \(25 more\)$/);
  });
  it('names-only layer information has nothing to check', () => {
    const f = buildLayersFacts(readEngineLayers(JSON.stringify({ Layers: ['a', 'b'], Bindings: [] })), 'fp16');
    expect(buildLayersText(f)).toMatch(/^Layers: 2 layers; no compute layer with a known precision to check for FP16/);
  });
});
