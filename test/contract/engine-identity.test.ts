// The options table (apps/shared/build-options.ts) against the engine's identity
// (apps/shared/engine-manifest.ts, docs/engines.md): every entry says whether the option can
// change the engine (`engineIdentity`). Each one that can must change the reuse key and make
// `check` name it; each one that cannot must change neither, and say why. A new option is a new
// table entry, so it is walked here by itself: it cannot be left out of the reuse key unnoticed.
//
// Pure: the key and the check are computed from the table's samples, with file digests made up
// per path (the service hashes the real files; apps/service/test/engine-reuse.test.ts builds with
// a few of these options for real).
import * as crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS, BuildOptions, type OptionEntry } from '../../apps/shared/build-options.js';
import {
  checkAgainst,
  EngineManifest,
  normalizeOptions,
  NormalizedOptions,
  OPTIONS_NOT_SHAPING_ENGINE,
  reuseKeyInputFor,
  reuseKeyMaterial,
  type ReuseKeyInput,
} from '../../apps/shared/engine-manifest.js';
import type { BackendInfo } from '../../apps/shared/protocol.js';

const sha = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
/** A made-up digest per path: another path, other bytes. */
const digestOf = (file: string) => sha(`bytes of ${file}`);
const MODEL_SHA = sha('model');
const identity: Pick<ReuseKeyInput, 'backend' | 'tensorrt' | 'gpu'> = {
  backend: 'simulated',
  tensorrt: { version: '10.16.0', adapterHeaderVersion: null, simulator: 'sim-1' },
  gpu: { name: 'NVIDIA A100-SXM4-80GB', computeCapability: '8.0' },
};
const BASE = { backend: 'simulated' } as const;
const options = (extra: Record<string, unknown> = {}) => BuildOptions.parse({ ...BASE, ...extra });
const keyOf = (o: BuildOptions) => reuseKeyMaterial(reuseKeyInputFor(identity, o, MODEL_SHA, digestOf));

/** What a build with the default options would have written: the manifest `check` compares with. */
function builtWithDefaults(): EngineManifest {
  const o = options();
  return EngineManifest.parse({
    formatVersion: 1,
    tool: { name: 'trt-build-studio', version: '0.0.0' },
    buildId: 'b1',
    createdAt: '2026-12-01T00:00:00.000Z',
    backend: 'simulated',
    tensorrt: identity.tensorrt,
    gpu: { name: null, computeCapability: null, uuid: null, device: null },
    driverVersion: null,
    cudaVersion: null,
    options: normalizeOptions(o),
    compatibility: { hardwareCompatibility: 'none', versionCompatible: false },
    pluginLibraries: [],
    model: { path: '/m/model.onnx', fileName: 'model.onnx', sha256: MODEL_SHA, bytes: 1, externalData: [], inputs: [], outputs: [] },
    timingCache: null,
    build: { wallMs: 1, phases: [] },
    engine: { file: 'model.engine', bytes: 1, sha256: sha('engine') },
  });
}

const sim: BackendInfo = { name: 'simulated', available: true, version: 'sim-1', emulates: '10.16.0' };
function reasonsFor(extra: Record<string, unknown>) {
  const o = options(extra);
  return checkAgainst(
    builtWithDefaults(),
    { backend: sim },
    {
      model: { path: '/m/model.onnx', sha256: MODEL_SHA },
      options: o,
      pinnedCacheSha256: o.pinnedCache ? digestOf(o.pinnedCache) : undefined,
    },
  ).reasons;
}

/** Where an option that shapes the engine is recorded when it is not one of the canonical options. */
const RECORDED_ELSEWHERE: Record<string, string> = { pinnedCache: 'pinnedCache: { path, sha256 } (the key takes its sha256)' };

const shaping = BUILD_OPTIONS.filter((e) => e.engineIdentity === true);
const notShaping = BUILD_OPTIONS.filter((e) => e.engineIdentity !== true);
const rows = (list: readonly OptionEntry[]) => list.map((e) => [e.field, e] as const);

describe('every option that can change the engine is part of its identity', () => {
  it('the table marks every entry one way or the other (the type requires it; this reads it back)', () => {
    expect(shaping.length + notShaping.length).toBe(BUILD_OPTIONS.length);
    expect(shaping.length).toBeGreaterThan(10);
  });

  it.each(rows(shaping))('%s: changes the reuse key', (_, e) => {
    expect(keyOf(options({ [e.field]: e.sample }))).not.toBe(keyOf(options()));
  });

  it.each(rows(shaping))('%s: check names it when it differs from the build', (_, e) => {
    const reasons = reasonsFor({ [e.field]: e.sample });
    expect(reasons.length, `${e.field}: no reason to rebuild`).toBeGreaterThan(0);
    const named = (what: string) =>
      what.includes(e.field) || ((e.field === 'shapes' || e.field === 'shapeValues') && what.startsWith(e.field === 'shapes' ? 'shape range' : 'shape values'));
    expect(
      reasons.some((r) => named(r.what)),
      JSON.stringify(reasons),
    ).toBe(true);
    for (const r of reasons) expect(r.was).not.toBe(r.now);
  });

  it.each(rows(shaping))('%s: the manifest records it', (_, e) => {
    const recorded = e.field in NormalizedOptions.shape || e.field in RECORDED_ELSEWHERE;
    expect(recorded, `${e.field}: the manifest records it nowhere (its table entry says { elsewhere }: add where to RECORDED_ELSEWHERE here)`).toBe(true);
    if (e.field in NormalizedOptions.shape) {
      // Its sample survives normalization (not silently dropped or defaulted).
      expect(normalizeOptions(options({ [e.field]: e.sample }))).not.toEqual(normalizeOptions(options()));
    }
  });
});

describe('an option that cannot change the engine says why, and neither the key nor check looks at it', () => {
  it.each(rows(notShaping))('%s', (_, e) => {
    const why = e.engineIdentity === true ? '' : e.engineIdentity.not;
    expect(why.length, `${e.field}: say why it does not shape the engine`).toBeGreaterThan(15);
    expect(keyOf(options({ [e.field]: e.sample }))).toBe(keyOf(options()));
    expect(reasonsFor({ [e.field]: e.sample })).toEqual([]);
    expect(OPTIONS_NOT_SHAPING_ENGINE).toContain(e.field);
  });

  it('the canonical options hold nothing but table fields', () => {
    const fields = new Set(BUILD_OPTIONS.map((e) => e.field));
    expect(Object.keys(NormalizedOptions.shape).filter((k) => !fields.has(k))).toEqual([]);
  });
});

describe('the files options name are in the key by their bytes', () => {
  it('a plugin library with other bytes, or a pinned cache with other bytes, gives another key', () => {
    const o = options({ dynamicPlugins: ['/p/libA.so'], pinnedCache: '/c/pinned.cache' });
    const k = reuseKeyMaterial(reuseKeyInputFor(identity, o, MODEL_SHA, digestOf));
    const otherPlugin = reuseKeyMaterial(reuseKeyInputFor(identity, o, MODEL_SHA, (f) => (f === '/p/libA.so' ? sha('rebuilt') : digestOf(f))));
    const otherCache = reuseKeyMaterial(reuseKeyInputFor(identity, o, MODEL_SHA, (f) => (f === '/c/pinned.cache' ? sha('re-timed') : digestOf(f))));
    expect(new Set([k, otherPlugin, otherCache]).size).toBe(3);
  });

  it('a library named in two lists is hashed once; the lists keep their order (load order matters)', () => {
    const o = options({ staticPlugins: ['/p/b.so', '/p/a.so'], pluginsToSerialize: ['/p/a.so'] });
    expect(reuseKeyInputFor(identity, o, MODEL_SHA, digestOf).pluginLibraries.map((p) => p.path)).toEqual(['/p/b.so', '/p/a.so']);
    expect(keyOf(o)).not.toBe(keyOf(options({ staticPlugins: ['/p/a.so', '/p/b.so'], pluginsToSerialize: ['/p/a.so'] })));
  });
});
