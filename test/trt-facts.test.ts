// The TensorRT facts are written once, in native/trt-facts.json, and owned by the native layer:
// the generated header the C++ reads is what the JSON gives; the build, the loader and the docs
// name the same supported majors; each backend the addon lists reports its capabilities, and
// TypeScript's reading of a bare version string agrees with the addon's for every release; no
// TypeScript condition names a TensorRT version.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BackendCapabilities, BackendInfo } from '../apps/shared/protocol.js';
import { backendCapabilities, SIM_DEFAULT_TRT_VERSION, SUPPORTED_TRT_MAJORS, trtCapabilities, trtSince, trtVersionOf } from '../apps/shared/trt-capabilities.js';
import { addonPath } from '../apps/worker/addon.js';
import { runCli } from './support/cli.js';
import { trtFakeBuild } from './support/trt-fakes.js';

const ROOT = path.resolve(__dirname, '..');
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');
const facts = JSON.parse(read('native/trt-facts.json')) as {
  supportedMajors: number[];
  lastChecked: string;
  simulatedDefault: string;
  precisionFlags: Record<string, { since?: string; deprecated?: string }>;
  hardwareCompatibility: Record<string, { since?: string }>;
  features: Record<string, { since: string; api: string }>;
};
const require_ = createRequire(__filename);
const gen = require_(path.join(ROOT, 'scripts/gen-trt-facts.js')) as { render: (f: unknown) => string };

interface RawAddon {
  trtCapabilitiesFor(version: string): BackendCapabilities | null;
  listBackends(): Promise<BackendInfo[]>;
}
const addon = () => require_(addonPath()) as RawAddon;

describe('native/trt-facts.json, the one list', () => {
  it('is what the checked-in C++ header says (scripts/gen-trt-facts.js --check)', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/gen-trt-facts.js'), '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(read('native/src/core/trt_facts.h')).toContain(`kSupportedMajors[] = {${facts.supportedMajors.join(', ')}}`);
  });

  it('the generator refuses a fact that is not a version, naming it', () => {
    const bad = { ...facts, features: { ...facts.features, buildRoutes: { since: '11', api: 'x' } } };
    expect(() => gen.render(bad)).toThrow('features.buildRoutes.since: "11" is not a major.minor version');
    expect(() => gen.render({ ...facts, supportedMajors: [] })).toThrow('supportedMajors');
  });

  it('the build and the loader read the majors from it, and write none of their own', () => {
    const cmake = read('native/trt.cmake');
    expect(cmake).toContain('file(READ "${TBS_TRT_DIR}/trt-facts.json"');
    expect(cmake).not.toMatch(/set\(TBS_TRT_SUPPORTED_MAJORS [0-9]/);
    expect(cmake).not.toMatch(/_v_MAJOR EQUAL [0-9]/);
    const host = read('native/src/trt/trt_host.cc');
    expect(host).toContain('facts::kSupportedMajors');
    expect(host).not.toMatch(/kMajors\[\] = \{/);
  });

  it('docs/tensorrt.md names the same majors and has a row for every release a fact starts at', () => {
    const doc = read('docs/tensorrt.md');
    expect(doc).toContain(`Supported TensorRT majors: ${facts.supportedMajors.join(', ')}.`);
    expect(doc).toContain(`newest release\nchecked against (${facts.lastChecked})`);
    expect(doc).toContain(`(${facts.simulatedDefault})`);
    const starts = [
      ...Object.values(facts.precisionFlags).flatMap((f) => [f.since, f.deprecated]),
      ...Object.values(facts.hardwareCompatibility).map((l) => l.since),
      ...Object.values(facts.features).map((f) => f.since),
    ].filter((v): v is string => v !== undefined);
    for (const v of new Set(starts)) expect(doc, `a "| ${v} |" row in the Versions table`).toContain(`\n| ${v} | `);
  });

  it('TypeScript reads the same facts', () => {
    expect(SUPPORTED_TRT_MAJORS).toEqual([...facts.supportedMajors].sort((a, b) => a - b));
    expect(SIM_DEFAULT_TRT_VERSION).toBe(facts.simulatedDefault);
    expect(trtSince({ precision: 'fp4' })).toBe(facts.precisionFlags.fp4.since);
    expect(trtSince({ hardwareCompatibility: 'same_compute_capability' })).toBe(facts.hardwareCompatibility.same_compute_capability.since);
    expect(trtSince({ feature: 'buildRoutes' })).toBe(facts.features.buildRoutes.since);
  });
});

describe('capabilities computed natively', () => {
  // Every minor of the releases around the supported ones, with and without patch and build parts.
  const releases = [9, 10, 11, 12].flatMap((major) => Array.from({ length: 21 }, (_, minor) => `${major}.${minor}.${minor % 3}`));

  it('the addon and trtCapabilities agree for every release', () => {
    const native = addon();
    for (const v of [...releases, '10.16.1.11', '11.1', ' 10.3.0 ']) {
      const { major: _major, minor: _minor, ...ts } = trtCapabilities(v);
      expect(native.trtCapabilitiesFor(v), v).toEqual(ts);
    }
    expect(native.trtCapabilitiesFor('sim-1')).toBeNull();
    expect(native.trtCapabilitiesFor('10')).toBeNull();
  });

  describe('each listed backend reports its own', () => {
    const saved = process.env.TBS_SIM_TRT_VERSION;
    afterEach(() => {
      if (saved === undefined) delete process.env.TBS_SIM_TRT_VERSION;
      else process.env.TBS_SIM_TRT_VERSION = saved;
    });

    it.each(['10.3.0', '10.12.0', '11.0.0', '11.1.0'])('the simulator imitating %s', async (version) => {
      process.env.TBS_SIM_TRT_VERSION = version;
      const list = (await addon().listBackends()).map((b) => BackendInfo.parse(b));
      const sim = list.find((b) => b.name === 'simulated')!;
      expect(sim.emulates).toBe(version);
      const { major: _major, minor: _minor, ...ts } = trtCapabilities(version);
      expect(sim.capabilities).toEqual(ts);
      // What the surfaces read is the report, with its major and minor.
      expect(backendCapabilities(sim)).toEqual(trtCapabilities(version));
      // The simulator has build routes exactly where its capabilities say so.
      expect(sim.buildRoutes !== undefined).toBe(sim.capabilities!.buildRoutes);
    });

    it('tensorrt without a library reports none (no release is known)', async () => {
      const trt = (await addon().listBackends()).find((b) => b.name === 'tensorrt')!;
      if (trt.library?.version) return; // a machine with TensorRT: covered by the adapter tests
      expect(trt.capabilities).toBeUndefined();
      expect(backendCapabilities(trt)).toBeUndefined();
    });
  });

  it('the report wins over the version: a backend that reports capabilities is read as it says', () => {
    const reported = { ...trtCapabilities('10.16.0'), buildRoutes: true } as BackendCapabilities & { major?: number; minor?: number };
    delete reported.major;
    delete reported.minor;
    const b: BackendInfo = { name: 'simulated', available: true, emulates: '10.16.0', capabilities: BackendCapabilities.parse(reported) };
    expect(backendCapabilities(b)?.buildRoutes).toBe(true);
    expect(backendCapabilities({ ...b, capabilities: undefined })?.buildRoutes).toBe(false);
  });

  it('the protocol refuses a report naming a precision it does not know', () => {
    const { major: _major, minor: _minor, ...ts } = trtCapabilities('10.16.0');
    expect(BackendCapabilities.safeParse({ ...ts, precisions: ['fp16', 'fp6'] }).success).toBe(false);
    expect(BackendCapabilities.safeParse(ts).success).toBe(true);
  });
});

// The tensorrt backend through the whole listing path (CLI, service, worker, addon, adapter) against
// the scripted fake libnvinfer of each major (test/support/trt-fakes.ts): our own fakes, so this
// proves the report's wiring (the release it is computed for), not what a real TensorRT returns.
describe.each([10, 11] as const)('the tensorrt backend with the fake TensorRT %i', (major) => {
  const fake = trtFakeBuild(major);
  const missing = 'missing' in fake ? fake.missing : undefined;
  if (missing) console.warn(`skipped: the tensorrt backend's capabilities on TensorRT ${major}: ${missing}`);
  it.skipIf(missing !== undefined)('reports the capabilities of the release it drives, through backends --json', async () => {
    if ('missing' in fake) return;
    const r = await runCli(['backends', '--json'], { env: { ...process.env, ...fake.env } });
    expect(r.code, r.stderr).toBe(0);
    const trt = (JSON.parse(r.stdout) as unknown[]).map((b) => BackendInfo.parse(b)).find((b) => b.name === 'tensorrt')!;
    expect(trt.available, trt.reason).toBe(true);
    expect(trt.adapter?.major).toBe(major);
    // The older of the library and the adapter's headers (trtVersionOf says which).
    const { major: _major, minor: _minor, ...ts } = trtCapabilities(trtVersionOf(trt)!);
    expect(trt.capabilities).toEqual(ts);
    expect(trt.capabilities!.stronglyTypedImplied).toBe(major === 11);
  });
});

describe('no TensorRT version in a TypeScript condition', () => {
  function sources(dir: string): string[] {
    return readdirSync(dir).flatMap((n) => {
      const p = path.join(dir, n);
      if (statSync(p).isDirectory()) return n === 'test' || n === 'node_modules' ? [] : sources(p);
      return /\.(ts|tsx|mts|cts)$/.test(n) && !/\.test\.tsx?$/.test(n) ? [p] : [];
    });
  }
  // A major or minor compared with a number, or a version literal ("10.12", '11.1.0') compared
  // or passed to a comparison helper. Help and error texts (inside template or string literals
  // that are not compared) may name versions in words.
  const GATE = [
    /\b(?:major|minor)\b\s*(?:[<>]=?|[!=]==?)\s*\d/,
    /\d\s*(?:[<>]=?|[!=]==?)\s*[\w.]*\b(?:major|minor)\b/,
    /(?:[<>]=?|[!=]==?)\s*['"`]1[0-9]\.\d+/,
    /['"`]1[0-9]\.\d+(?:\.\d+)?['"`]\s*(?:[<>]=?|[!=]==?)/,
    /\b(?:atLeast|releaseHas|versionAtLeast|compareVersions)\([^)]*\b1[0-9]\s*,\s*\d/,
  ];

  it('holds across apps/', () => {
    const hits: string[] = [];
    for (const file of sources(path.join(ROOT, 'apps'))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // Comments are words: a line comment, a block comment on one line, a doc comment's line.
          const code = /^\s*(?:\*|\/\*)/.test(line) ? '' : line.replace(/\/\*.*?\*\//g, '').replace(/\/\/.*$/, '');
          if (GATE.some((g) => g.test(code))) hits.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
  });

  it('the check catches the gates it is for', () => {
    const caught = (src: string) => GATE.some((g) => g.test(src));
    expect(caught('const eleven = v.major >= 11;')).toBe(true);
    expect(caught('if (major > 10 || minor >= 13) x();')).toBe(true);
    expect(caught("if (version === '11.1.0') x();")).toBe(true);
    expect(caught('atLeast(v, 10, 12)')).toBe(true);
    expect(caught('const ok = releaseHas(v, facts.features.buildRoutes.since);')).toBe(false);
    expect(caught('`--best: TensorRT ${v} has no --best (trtexec 11 removed it)`')).toBe(false);
  });
});
