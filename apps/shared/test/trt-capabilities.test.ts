import { describe, expect, it } from 'vitest';
import type { BackendInfo } from '../protocol.js';
import { chosenBackend, parseTrtVersion, PRECISION_REMOVED_ADVICE, SIM_DEFAULT_TRT_VERSION, trtCapabilities, trtVersionOf, versionProblems } from '../trt-capabilities.js';

describe('parseTrtVersion', () => {
  it.each([
    ['10.3.0', { major: 10, minor: 3, patch: 0 }],
    ['10.16.1.11', { major: 10, minor: 16, patch: 1 }],
    ['11.1', { major: 11, minor: 1, patch: 0 }],
    [' 11.0.2 ', { major: 11, minor: 0, patch: 2 }],
  ])('%s', (s, v) => expect(parseTrtVersion(s)).toEqual(v));
  it.each(['sim-1', '', 'ten', '10', '10.x'])('rejects %j', (s) => expect(parseTrtVersion(s)).toBeNull());
});

describe('trtCapabilities per version', () => {
  it.each([
    ['10.0.1', ['fp16', 'bf16', 'int8', 'fp8'], [], false, false],
    ['10.1.0', ['fp16', 'bf16', 'int8', 'fp8', 'int4'], [], false, false],
    ['10.3.0', ['fp16', 'bf16', 'int8', 'fp8', 'int4'], [], false, false],
    ['10.8.0', ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'], [], true, false],
    ['10.9.0', ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'], [], true, true],
    ['10.12.0', ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'], ['int4', 'fp4'], true, true],
    ['10.16.1', ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'], ['int4', 'fp4'], true, true],
    ['11.0.0', [], [], true, true],
    ['11.1.0', [], [], true, true],
  ] as const)('%s', (version, precisions, deprecated, keyCount, sameCC) => {
    const c = trtCapabilities(version);
    expect(c.precisions).toEqual(precisions);
    expect(c.deprecatedPrecisions).toEqual(deprecated);
    expect(c.timingCacheKeyCount).toBe(keyCount);
    expect(c.hardwareCompatibility.includes('same_compute_capability')).toBe(sameCC);
    expect(c.hardwareCompatibility.slice(0, 2)).toEqual(['none', 'ampere_plus']);
    expect(c.stronglyTypedImplied).toBe(version.startsWith('11'));
    expect(c.buildRoutes).toBe(version === '11.1.0');
    expect(c.serializeToStream).toBe(['10.16.1', '11.0.0', '11.1.0'].includes(version));
  });
});

describe('the version a build follows', () => {
  const trt = (over: Partial<BackendInfo>): BackendInfo => ({ name: 'tensorrt', available: true, ...over });
  it('is the found library for tensorrt, the imitated one for the simulator', () => {
    expect(trtVersionOf(trt({ version: '10.16.1', library: { path: '/x/libnvinfer.so.10', version: '10.3.0' } }))).toBe('10.3.0');
    expect(trtVersionOf(trt({ version: '10.16.1' }))).toBe('10.16.1');
    // The lower of library and adapter headers: a 10.3-built adapter cannot pass what 10.16 has.
    const adapter = (headerVersion: string) => ({ major: 10, headerVersion, path: '/a/libtbs_trt10.so' });
    expect(trtVersionOf(trt({ library: { path: '/x/libnvinfer.so.10', version: '10.16.1' }, adapter: adapter('10.3.0') }))).toBe('10.3.0');
    expect(trtVersionOf(trt({ library: { path: '/x/libnvinfer.so.10', version: '10.3.0' }, adapter: adapter('10.16.1') }))).toBe('10.3.0');
    expect(trtCapabilities(trtVersionOf(trt({ library: { path: '/x/libnvinfer.so.10', version: '10.16.1' }, adapter: adapter('10.3.0') }))!).precisions).not.toContain('fp4');
    expect(trtVersionOf(trt({ available: false, version: '10.16.1' }))).toBeUndefined();
    expect(trtVersionOf({ name: 'simulated', available: true, version: 'sim-1', emulates: '11.1.0' })).toBe('11.1.0');
    expect(trtVersionOf({ name: 'simulated', available: true, version: 'sim-1' })).toBe(SIM_DEFAULT_TRT_VERSION);
  });
  it('auto picks TensorRT when available, else the simulator', () => {
    const sim: BackendInfo = { name: 'simulated', available: true };
    expect(chosenBackend('auto', [trt({}), sim])?.name).toBe('tensorrt');
    expect(chosenBackend(undefined, [trt({ available: false }), sim])?.name).toBe('simulated');
    expect(chosenBackend('tensorrt', [trt({ available: false }), sim])).toBeUndefined();
  });
});

describe('versionProblems', () => {
  const v11 = trtCapabilities('11.1.0');
  const v10 = trtCapabilities('10.3.0');
  it('refuses precision flags on 11 with the advice, naming each', () => {
    const [p] = versionProblems({ precision: ['fp16', 'int8'] }, v11);
    expect(p).toContain('precision "fp16", precision "int8": TensorRT 11.1.0 has no precision flags');
    expect(p).toContain(PRECISION_REMOVED_ADVICE);
    // The same with the flag spelling of a command line.
    expect(versionProblems({ precision: ['fp16'] }, v11, (f, v) => (f === 'precision' ? `--${v}` : f))[0]).toMatch(/^--fp16: TensorRT 11/);
  });
  it('refuses stronglyTyped with a precision flag on 10.x', () => {
    expect(versionProblems({ stronglyTyped: true, precision: ['bf16'] }, v10)[0]).toMatch(/stronglyTyped cannot be combined with precision "bf16"/);
    expect(versionProblems({ stronglyTyped: true }, v10)).toEqual([]);
    expect(versionProblems({ stronglyTyped: true }, v11)).toEqual([]);
  });
  it('refuses flags the library is too old for, naming the version that has them', () => {
    expect(versionProblems({ precision: ['fp4'] }, v10)).toEqual(['precision "fp4" needs TensorRT 10.8 or newer; the build would run on TensorRT 10.3.0.']);
    expect(versionProblems({ precision: ['int4'] }, trtCapabilities('10.0.0'))[0]).toMatch(/int4" needs TensorRT 10.1/);
    expect(versionProblems({ precision: ['int4', 'fp16'] }, v10)).toEqual([]);
    expect(versionProblems({ hardwareCompatibility: 'same_compute_capability' }, v10)[0]).toMatch(
      /hardwareCompatibility "same_compute_capability" needs TensorRT 10.9 or newer; TensorRT 10.3.0 offers none, ampere_plus/,
    );
    expect(versionProblems({ hardwareCompatibility: 'ampere_plus' }, v10)).toEqual([]);
  });
  it('accepts excludeLeanRuntime without versionCompatible, as trtexec does (the build warns instead), on every version', () => {
    for (const caps of [v10, v11]) {
      expect(versionProblems({ excludeLeanRuntime: true }, caps)).toEqual([]);
      expect(versionProblems({ versionCompatible: true, excludeLeanRuntime: true }, caps)).toEqual([]);
      expect(versionProblems({ versionCompatible: true }, caps)).toEqual([]);
    }
  });
  it('takes a build route only on 11.1+, checked knob by knob against the patterns the library lists', () => {
    const route = '-conv_use_long_w=off -kgen:codegen:cuda_tile=2';
    const patterns = ['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]'];
    expect(versionProblems({ buildRoute: route }, trtCapabilities('11.0.0'))[0]).toMatch(/buildRoute needs TensorRT 11.1 or newer .* TensorRT 11.0.0/);
    expect(versionProblems({ buildRoute: route }, v11)).toEqual([]);
    expect(versionProblems({ buildRoute: route }, v11, undefined, patterns)).toEqual([]);
    expect(versionProblems({ buildRoute: '-conv_use_long_w=maybe' }, v11, undefined, patterns)[0]).toMatch(
      /buildRoute: knob -conv_use_long_w does not take "maybe"; allowed: -conv_use_long_w=\[on\|off\]/,
    );
    // The pattern is not a route, whether or not the library listed its knobs.
    expect(versionProblems({ buildRoute: '-conv_use_long_w=[on|off]' }, v11)[0]).toMatch(/knob -conv_use_long_w: .* pattern of allowed values, not a route/);
    expect(versionProblems({ buildRoute: 'fast' }, v11, undefined, patterns)[0]).toMatch(/"fast" is not a knob setting/);
  });
});
