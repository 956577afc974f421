// The Engine view's logic: files read in the page, rows of one engine or two, sort and filter,
// precision shares, and the virtualized row window.
import { describe, expect, it } from 'vitest';
import { engineRows, NO_FILTER, precisionShares, readLayerFiles, RowLayout, typeChoices, visibleRows } from '../lib/engine-view.js';
import { readEngineLayers } from '../../shared/engine-layers.js';

const FP16 = 'Channel major FP16 format where channel % 8 == 0';
const FP32 = 'Row major linear FP32';
const layer = (name: string, type: string, fmt: string, tactic = 't0') => ({
  Name: name,
  LayerType: type,
  Outputs: [{ Name: `${name}_o`, 'Format/Datatype': fmt }],
  TacticName: tactic,
  TacticValue: '0x1',
});
const A = { Layers: [layer('conv1 + relu1', 'CaskConvolution', FP16), layer('tanh', 'PointWiseV2', FP32), layer('fc', 'CaskGemmConvolution', FP16)], Bindings: ['x', 'y'] };
const B = { Layers: [layer('conv1 + relu1', 'CaskConvolution', FP16, 't9'), layer('tanh', 'PointWiseV2', FP16), layer('extra', 'Shuffle', FP32)], Bindings: ['x', 'y'] };
const PROFILE = [
  { count: 10 },
  { name: 'conv1 + relu1', timeMs: 3, averageMs: 0.3, medianMs: 0.3, percentage: 60 },
  { name: 'tanh', timeMs: 0.5, averageMs: 0.05, medianMs: 0.05, percentage: 10 },
  { name: 'fc', timeMs: 1.5, averageMs: 0.15, medianMs: 0.15, percentage: 30 },
];

describe('readLayerFiles', () => {
  it('tells the layer JSON from the profile by shape, in either order', () => {
    const src = readLayerFiles([
      { name: 'p.json', text: JSON.stringify(PROFILE) },
      { name: 'l.json', text: JSON.stringify(A) },
    ]);
    expect(src.label).toBe('l.json + p.json');
    expect(src.read.layers.map((l) => [l.name, l.precision, l.timeMs])).toEqual([
      ['conv1 + relu1', 'fp16', 3],
      ['tanh', 'fp32', 0.5],
      ['fc', 'fp16', 1.5],
    ]);
    expect(src.read.summary.totalMs).toBe(5);
  });
  it('one-line errors naming the files', () => {
    expect(() => readLayerFiles([])).toThrow(/no file given/);
    expect(() => readLayerFiles([{ name: 'p.json', text: '[]' }])).toThrow(/^p\.json: is a profile/);
    expect(() =>
      readLayerFiles([
        { name: 'a.json', text: '{}' },
        { name: 'b.json', text: '{}' },
      ]),
    ).toThrow(/two layer files/);
    expect(() => readLayerFiles([{ name: 'deep.json', text: '{"Layers":' + '['.repeat(100) }])).toThrow(/deep\.json: JSON nested deeper/);
  });
});

describe('rows, sorting and filtering', () => {
  const a = readEngineLayers(JSON.stringify(A), JSON.stringify(PROFILE));
  const b = readEngineLayers(JSON.stringify(B));
  it('sorts by time (untimed last), by precision width, and back to engine order', () => {
    const rows = engineRows(a);
    expect(visibleRows(rows, NO_FILTER, 'time', 'desc').map((r) => r.layer.name)).toEqual(['conv1 + relu1', 'fc', 'tanh']);
    expect(visibleRows(rows, NO_FILTER, 'precision', 'desc').map((r) => r.layer.name)).toEqual(['tanh', 'conv1 + relu1', 'fc']);
    expect(visibleRows(rows, NO_FILTER, 'name', 'asc').map((r) => r.layer.name)).toEqual(['conv1 + relu1', 'fc', 'tanh']);
    expect(visibleRows(rows, NO_FILTER, 'order', 'asc').map((r) => r.layer.name)).toEqual(['conv1 + relu1', 'tanh', 'fc']);
  });
  it('filters by name text, type and precision', () => {
    const rows = engineRows(a);
    expect(visibleRows(rows, { ...NO_FILTER, text: 'RELU' }, 'order', 'asc').map((r) => r.layer.name)).toEqual(['conv1 + relu1']);
    expect(visibleRows(rows, { ...NO_FILTER, precision: 'fp32' }, 'order', 'asc').map((r) => r.layer.name)).toEqual(['tanh']);
    expect(visibleRows(rows, { ...NO_FILTER, type: 'CaskGemmConvolution' }, 'order', 'asc').map((r) => r.layer.name)).toEqual(['fc']);
    expect(typeChoices(rows)).toEqual(['CaskConvolution', 'CaskGemmConvolution', 'PointWiseV2']);
  });
  it('two engines: matched by name, changes marked, layers only in one kept', () => {
    const rows = engineRows(a, b);
    const changed = visibleRows(rows, { ...NO_FILTER, changedOnly: true }, 'order', 'asc');
    expect(changed.map((r) => [r.layer.name, r.change!.what])).toEqual([
      ['conv1 + relu1', ['tactic']],
      ['tanh', ['precision', 'format']],
      ['fc', ['only in a']],
      ['extra', ['only in b']],
    ]);
    expect(rows[1]!.other!.precision).toBe('fp16');
  });
  it('precision shares, widest first', () => {
    expect(precisionShares(a.summary)).toEqual([
      { precision: 'fp32', count: 1, share: 1 / 3 },
      { precision: 'fp16', count: 2, share: 2 / 3 },
    ]);
  });
});

describe('RowLayout', () => {
  it('places rows and expanded details, and finds the window by binary search', () => {
    const l = new RowLayout(10_000, 24, 100, [5]);
    expect(l.top(5)).toBe(120);
    expect(l.top(6)).toBe(6 * 24 + 100);
    expect(l.height).toBe(10_000 * 24 + 100);
    expect(l.indexAt(121)).toBe(5);
    expect(l.indexAt(6 * 24 + 100)).toBe(6);
    const w = l.window(24 * 5000, 480, 4);
    expect(w.start).toBe(l.indexAt(24 * 5000) - 4);
    expect(w.end - w.start).toBeLessThan(40);
    expect(new RowLayout(0, 24, 100, []).window(0, 400)).toEqual({ start: 0, end: 0 });
  });
});
