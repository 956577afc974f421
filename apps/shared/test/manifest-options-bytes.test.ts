// The canonical options and the reuse key, byte for byte. They are derived from the options table
// (each entry's `manifest` spec, build-options.ts), and a stored engine's key is recomputed from
// its manifest on disk: a reordered field or another default would change every key, so engines
// already in a store would never match again. The texts below are what manifest format 1 has
// always written (checked against the hand-written normalizeOptions the table replaced).
import { describe, expect, it } from 'vitest';
import { BuildOptions } from '../build-options.js';
import { EngineManifest, normalizeOptions, NormalizedOptions, optionsFromManifest, reuseKeyInputFor, reuseKeyMaterial } from '../engine-manifest.js';

const DEFAULTS =
  '{"optLevel":3,"workspaceMiB":null,"tacticDramMiB":null,"tacticSharedMemoryKiB":null,"shapes":{},"shapeValues":{},"stronglyTyped":false,' +
  '"precision":[],"tf32":true,"profilingVerbosity":"layer_names_only","hardwareCompatibility":"none","versionCompatible":false,' +
  '"excludeLeanRuntime":false,"maxAuxStreams":null,"device":0,"buildRoute":null,"staticPlugins":[],"dynamicPlugins":[],"pluginsToSerialize":[],' +
  '"maxGpuMemory":null,"inferCacheMisses":false,"verboseLog":false,"simSeed":1,"simDuration":null}';

const SOME = {
  backend: 'tensorrt',
  optLevel: 5,
  workspaceMiB: 2048,
  precision: ['int8', 'fp16'],
  shapes: { y: { min: [1], opt: [2], max: [4] }, x: { min: [1, 3], opt: [2, 3], max: [4, 3] } },
  inferCacheMisses: true,
  maxAuxStreams: 2,
  dynamicPlugins: ['/p/b.so', '/p/a.so'],
  sparsity: 'enable',
  avgTiming: 4,
  verboseLog: true,
  simDuration: 1.5,
};
const SOME_TEXT =
  '{"optLevel":5,"workspaceMiB":2048,"tacticDramMiB":null,"tacticSharedMemoryKiB":null,"shapes":{"x":{"min":[1,3],"opt":[2,3],"max":[4,3]},' +
  '"y":{"min":[1],"opt":[2],"max":[4]}},"shapeValues":{},"stronglyTyped":false,"precision":["fp16","int8"],"tf32":true,' +
  '"profilingVerbosity":"detailed","hardwareCompatibility":"none","versionCompatible":false,"excludeLeanRuntime":false,"maxAuxStreams":2,' +
  '"device":0,"buildRoute":null,"staticPlugins":[],"dynamicPlugins":["/p/b.so","/p/a.so"],"pluginsToSerialize":[],"maxGpuMemory":null,' +
  '"inferCacheMisses":true,"verboseLog":true,"simSeed":1,"simDuration":1.5,"sparsity":"enable","avgTiming":4}';

describe('the canonical options keep the bytes of manifest format 1', () => {
  it('defaults: every always-recorded field, in its order', () => {
    expect(JSON.stringify(normalizeOptions(BuildOptions.parse({ backend: 'simulated' })))).toBe(DEFAULTS);
  });

  it('given options: lists sorted or kept, shapes by name, implied values, and the given-only fields after the rest', () => {
    expect(JSON.stringify(normalizeOptions(BuildOptions.parse(SOME)))).toBe(SOME_TEXT);
  });

  it('a manifest read back has the same text, and so the same key', () => {
    expect(JSON.stringify(NormalizedOptions.parse(JSON.parse(SOME_TEXT)))).toBe(SOME_TEXT);
    // Written before versionCompatible and excludeLeanRuntime existed, and with a null seed.
    const older = JSON.parse(DEFAULTS) as Record<string, unknown>;
    delete older.versionCompatible;
    delete older.excludeLeanRuntime;
    older.simSeed = null;
    const read = NormalizedOptions.parse(older);
    expect(read).toMatchObject({ versionCompatible: false, excludeLeanRuntime: false, simSeed: null });
    expect(Object.keys(read)).toEqual(Object.keys(JSON.parse(DEFAULTS)));
  });

  it('the manifest checks kinds of value, as it always did: a missing field or a wrong kind is refused', () => {
    const missing = JSON.parse(DEFAULTS) as Record<string, unknown>;
    delete missing.optLevel;
    expect(NormalizedOptions.safeParse(missing).success).toBe(false);
    expect(NormalizedOptions.safeParse({ ...JSON.parse(DEFAULTS), hardwareCompatibility: 'hopper_plus' }).success).toBe(false);
    expect(NormalizedOptions.safeParse({ ...JSON.parse(DEFAULTS), optLevel: 1.5 }).success).toBe(false);
    // A precision name is read as text (one a later release drops still reads).
    expect(NormalizedOptions.safeParse({ ...JSON.parse(DEFAULTS), precision: ['fp6'] }).success).toBe(true);
    expect(EngineManifest.shape.options).toBe(NormalizedOptions);
  });

  it('the reuse key material', () => {
    const identity = {
      backend: 'tensorrt' as const,
      tensorrt: { version: '10.16.0', adapterHeaderVersion: '10.16.0', simulator: null },
      gpu: { name: 'NVIDIA H100', computeCapability: '9.0' },
    };
    const o = BuildOptions.parse({ backend: 'tensorrt', maxAuxStreams: 2, dynamicPlugins: ['/p/a.so'] });
    expect(reuseKeyMaterial(reuseKeyInputFor(identity, o, 'a'.repeat(64), () => 'b'.repeat(64)))).toBe(
      '{"v":1,"backend":"tensorrt","tensorrt":{"version":"10.16.0","adapterHeaderVersion":"10.16.0","simulator":null},' +
        '"gpu":{"name":"NVIDIA H100","computeCapability":"9.0"},"options":{"optLevel":3,"workspaceMiB":null,"tacticDramMiB":null,' +
        '"tacticSharedMemoryKiB":null,"shapes":{},"shapeValues":{},"stronglyTyped":false,"precision":[],"tf32":true,' +
        '"profilingVerbosity":"layer_names_only","hardwareCompatibility":"none","versionCompatible":false,"excludeLeanRuntime":false,' +
        '"maxAuxStreams":2,"device":0,"buildRoute":null,"staticPlugins":[],"dynamicPlugins":["/p/a.so"],"pluginsToSerialize":[],' +
        '"maxGpuMemory":null,"inferCacheMisses":false,"simSeed":1},"model":"' +
        'a'.repeat(64) +
        '","plugins":["' +
        'b'.repeat(64) +
        '"],"pinned":null}',
    );
  });

  it('the options a manifest stands for: only what differs from the unset values', () => {
    const m = { backend: 'tensorrt' as const, options: NormalizedOptions.parse(JSON.parse(SOME_TEXT)), timingCache: null, pinnedCache: null };
    // profilingVerbosity "detailed" is what inferCacheMisses implies, so it is not given again.
    expect(optionsFromManifest(m)).toEqual({
      backend: 'tensorrt',
      optLevel: 5,
      workspaceMiB: 2048,
      precision: ['fp16', 'int8'],
      shapes: SOME.shapes,
      inferCacheMisses: true,
      maxAuxStreams: 2,
      dynamicPlugins: ['/p/b.so', '/p/a.so'],
      sparsity: 'enable',
      avgTiming: 4,
      verboseLog: true,
      simDuration: 1.5,
    });
  });
});
