import { describe, expect, it } from 'vitest';
import { composeRoute, knobDatabaseOf, knobEntriesJson, knobsFromPatterns, parseKnobDatabase, parseKnobPattern, parseRoute, routeChoices, routeProblems } from '../build-routes.js';

// The example of TensorRT 11.1's NvInfer.h (IBuilderConfig::getAllBuildRoutes), as the library writes it.
const HEADER_EXAMPLE = JSON.stringify({
  tuner_version: '2.19.15',
  tuner_options: [
    { option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on', help: 'Convert Conv [N, C, X, 1] to [N, C, 1, X] in CASK params for perf.' },
    { option: '-kgen:codegen:cuda_tile', allowed_values: '-kgen:codegen:cuda_tile=[0|1|2|3]', default_value: '1', help: 'CUDA Tile codegen.' },
  ],
});
const NVIDIA_ROUTE = '-conv_use_long_w=off -kgen:codegen:cuda_tile=2';

describe('the knob database', () => {
  it('reads getAllBuildRoutes() JSON into knobs with their allowed values', () => {
    const db = parseKnobDatabase(HEADER_EXAMPLE);
    expect(db.tunerVersion).toBe('2.19.15');
    expect(db.knobs.map((k) => [k.option, k.values, k.defaultValue])).toEqual([
      ['-conv_use_long_w', ['on', 'off'], 'on'],
      ['-kgen:codegen:cuda_tile', ['0', '1', '2', '3'], '1'],
    ]);
  });
  it('says what is wrong with a database that is not the documented shape', () => {
    expect(() => parseKnobDatabase('{')).toThrow(/not JSON/);
    expect(() => parseKnobDatabase('{"tuner_version":"1"}')).toThrow(/no "tuner_options" array/);
  });
  it('reads an empty database (some builds list no routes) as no knobs, not as an error', () => {
    expect(parseKnobDatabase('')).toEqual({ knobs: [] });
    expect(parseKnobDatabase(' \n')).toEqual({ knobs: [] });
    expect(knobDatabaseOf({ name: 'tensorrt', available: true, buildRoutes: [], detail: { buildRoutesJson: '' } })).toEqual({ knobs: [] });
  });
  it('reads a pattern into its knob and values, and keeps a pattern of another form without values', () => {
    expect(parseKnobPattern('-kgen:codegen:cuda_tile=[0|1|2|3]')).toEqual({ option: '-kgen:codegen:cuda_tile', values: ['0', '1', '2', '3'] });
    expect(parseKnobPattern('-threads=<int>')).toEqual({ option: '-threads', values: [] });
    expect(parseKnobPattern('-bare')).toEqual({ option: '-bare', values: [] });
    expect(parseKnobPattern('no knob here')).toBeNull();
  });
  // As NVIDIA's tuner (trtexec 11.1, sampleTuning.cpp) reads allowed values.
  it('trims the alternatives of -k=[a | b], and reads [1...64] as a range, never as a choice', () => {
    expect(parseKnobPattern('-k=[a | b |\tc]')).toEqual({ option: '-k', values: ['a', 'b', 'c'] });
    expect(parseKnobPattern('-threads=[1...64]')).toEqual({ option: '-threads', values: [], range: { min: 1, max: 64 } });
    expect(parseKnobPattern('-threads=[ 1 ... 64 ]')).toEqual({ option: '-threads', values: [], range: { min: 1, max: 64 } });
    // A "..." that is not two integers: unbounded, no choices.
    expect(parseKnobPattern('-x=[a...z]')).toEqual({ option: '-x', values: [] });
    const db = knobsFromPatterns(['-threads=[1...64]', '-k=[a | b]']);
    expect(db.knobs.map((k) => k.values)).toEqual([[], ['a', 'b']]);
  });
  it('keeps every entry with an option, whatever its allowed values are', () => {
    const db = parseKnobDatabase(
      JSON.stringify({
        tuner_options: [
          { option: '-n', allowed_values: 7, default_value: '3' },
          { option: 'm' },
          { option: '-l', allowed_values: ['a', 'b'] },
          { allowed_values: '-nameless=[1|2]' },
          { option: '' },
          'not an entry',
        ],
      }),
    );
    expect(db.knobs.map((k) => [k.option, k.values, k.defaultValue])).toEqual([
      ['-n', [], '3'],
      ['-m', [], undefined],
      ['-l', [], undefined],
    ]);
    // Such a knob takes any value: the library has the last word.
    expect(routeProblems('-n=5 -m=anything', db)).toEqual([]);
  });
  it('prefers the JSON a backend reports, else its patterns', () => {
    const patterns = ['-conv_use_long_w=[on|off]'];
    expect(knobDatabaseOf({ name: 'tensorrt', available: true, buildRoutes: patterns, detail: { buildRoutesJson: HEADER_EXAMPLE } })?.knobs).toHaveLength(2);
    expect(knobDatabaseOf({ name: 'tensorrt', available: true, buildRoutes: patterns })?.knobs.map((k) => k.option)).toEqual(['-conv_use_long_w']);
    expect(knobDatabaseOf({ name: 'tensorrt', available: true })).toBeUndefined();
  });
  it("gives one knob as trtexec --helpBuildRoute=<knob> does: the library's entries whole, with or without the dash", () => {
    const raw = JSON.stringify({
      tuner_version: '2.19.15',
      tuner_options: [
        { option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on', extra: { kept: true } },
        { option: '-kgen:codegen:cuda_tile', allowed_values: 3 },
      ],
    });
    const one = JSON.parse(knobEntriesJson(raw, 'conv_use_long_w')!) as unknown;
    expect(one).toEqual({
      tuner_version: '2.19.15',
      tuner_options: [{ option: '-conv_use_long_w', allowed_values: '-conv_use_long_w=[on|off]', default_value: 'on', extra: { kept: true } }],
    });
    expect(JSON.parse(knobEntriesJson(raw, '-kgen:codegen:cuda_tile')!)).toEqual({
      tuner_version: '2.19.15',
      tuner_options: [{ option: '-kgen:codegen:cuda_tile', allowed_values: 3 }],
    });
    expect(knobEntriesJson(raw, 'nope')).toBeUndefined();
    expect(knobEntriesJson('', 'conv_use_long_w')).toBeUndefined();
    expect(() => knobEntriesJson('{', 'x')).toThrow(/not JSON/);
  });
});

describe('routes', () => {
  const db = parseKnobDatabase(HEADER_EXAMPLE);
  it("accepts NVIDIA's example route", () => {
    expect(parseRoute(NVIDIA_ROUTE).settings).toEqual([
      { option: '-conv_use_long_w', value: 'off' },
      { option: '-kgen:codegen:cuda_tile', value: '2' },
    ]);
    expect(routeProblems(NVIDIA_ROUTE, db)).toEqual([]);
    expect(routeProblems(`  ${NVIDIA_ROUTE.replace(' ', '   ')} `, db)).toEqual([]);
  });
  it('refuses the pattern given as a route, naming the knob', () => {
    const p = routeProblems('-conv_use_long_w=[on|off]', db, '--build-route');
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(
      /^--build-route: knob -conv_use_long_w: "-conv_use_long_w=\[on\|off\]" is the knob's pattern of allowed values, not a route; choose one value, e.g. -conv_use_long_w=on$/,
    );
    // Also without a database: it is wrong by its form.
    expect(routeProblems('-kgen:codegen:cuda_tile=[0|1|2|3]', undefined)[0]).toMatch(/knob -kgen:codegen:cuda_tile/);
  });
  it('names the bad knob or the bad value', () => {
    expect(routeProblems('-conv_use_long_w=sideways', db)).toEqual(['buildRoute: knob -conv_use_long_w does not take "sideways"; allowed: -conv_use_long_w=[on|off]']);
    expect(routeProblems('-no_such_knob=1', db)[0]).toMatch(/unknown knob -no_such_knob; this library's knobs: -conv_use_long_w, -kgen:codegen:cuda_tile/);
    expect(routeProblems('fast', db)[0]).toMatch(/"fast" is not a knob setting/);
    expect(routeProblems('-conv_use_long_w=', db)[0]).toMatch(/is not a knob setting/);
    expect(routeProblems('-conv_use_long_w=on -conv_use_long_w=off', db)[0]).toMatch(/set twice/);
    expect(routeProblems('   ', db)[0]).toMatch(/route is empty/);
  });
  it('takes an integer within a range knob, and names the range otherwise', () => {
    const ranged = parseKnobDatabase(
      JSON.stringify({
        tuner_options: [
          { option: '-threads', allowed_values: '-threads=[1...64]' },
          { option: '-k', allowed_values: '-k=[a | b]' },
        ],
      }),
    );
    expect(routeProblems('-threads=1 -k=b', ranged)).toEqual([]);
    expect(routeProblems('-threads=64', ranged)).toEqual([]);
    for (const bad of ['0', '65', '1...64', '2.5', 'x']) {
      expect(routeProblems(`-threads=${bad}`, ranged)).toEqual([`buildRoute: knob -threads takes an integer from 1 to 64, not "${bad}"; allowed: -threads=[1...64]`]);
    }
    expect(routeProblems('-k= b', ranged)[0]).toMatch(/is not a knob setting/);
    expect(routeProblems('-k=c', ranged)).toEqual(['buildRoute: knob -k does not take "c"; allowed: -k=[a | b]']);
  });
  it('checks only the syntax without a database (the library has the last word)', () => {
    expect(routeProblems('-anything=1', undefined)).toEqual([]);
    expect(routeProblems('-anything=1', knobsFromPatterns([]))).toEqual([]);
  });
  it('composes a route from one choice per knob, in the database order, and reads it back', () => {
    const route = composeRoute({ '-kgen:codegen:cuda_tile': '2', '-conv_use_long_w': 'off' }, db);
    expect(route).toBe(NVIDIA_ROUTE);
    expect(composeRoute({ '-conv_use_long_w': '' }, db)).toBe('');
    expect(routeChoices(route)).toEqual({ '-conv_use_long_w': 'off', '-kgen:codegen:cuda_tile': '2' });
  });
});
