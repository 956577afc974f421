// `trt-build-studio trtexec` and the version-dependent options of `build`, through the real CLI in
// a child process (dist/ must be built: `npm run build:ts`). TBS_SIM_TRT_VERSION makes the
// simulated backend imitate another TensorRT version, so TensorRT 11 handling is exercised here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { trtexecShapeArgs } from '../../shared/trtexec.js';

let dir: string;
let dyn: string;
let fixed: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-trtexec-');
  dyn = writeModel(path.join(dir, 'dyn.onnx'), { dynamic: true, layers: 1 });
  fixed = writeModel(path.join(dir, 'fixed.onnx'), { layers: 1 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const v11 = { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } };
const v103 = { env: { ...process.env, TBS_SIM_TRT_VERSION: '10.3.0' } };

type Ev = { type: string; status?: string; options?: Record<string, unknown>; outputPath?: string; severity?: string; message?: string };

describe('trtexec', () => {
  it('builds what a trtexec command line describes, with --json', async () => {
    const engine = path.join(dir, 'e.engine');
    const cache = path.join(dir, 'e.cache');
    const r = await runCli([
      'trtexec',
      `--onnx=${dyn}`,
      `--saveEngine=${engine}`,
      '--minShapes=input:1x3x32x32',
      '--optShapes=input:2x3x32x32',
      '--maxShapes=input:4x3x64x64',
      `--timingCacheFile=${cache}`,
      '--builderOptimizationLevel=2',
      '--memPoolSize=workspace:1G,tacticSharedMem:48K',
      '--noTF32',
      '--fp16',
      '--skipInference',
      '--backend=simulated',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const events = parseNdjson(r.stdout) as Ev[];
    const started = events.find((e) => e.type === 'build.started')!;
    expect(started.options).toMatchObject({
      backend: 'simulated',
      optLevel: 2,
      workspaceMiB: 1024,
      tacticSharedMemoryKiB: 48,
      tf32: false,
      precision: ['fp16'],
      timingCache: cache,
      shapes: { input: { min: [1, 3, 32, 32], opt: [2, 3, 32, 32], max: [4, 3, 64, 64] } },
    });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded', outputPath: engine });
    expect(fs.statSync(engine).size).toBeGreaterThan(0);
  });

  it("carries trtexec's other build flags (issue 37) into the build, and writes the layer information where asked", async () => {
    const engine = path.join(dir, 'flags.engine');
    const exported = path.join(dir, 'exported-layers.json');
    const r = await runCli([
      'trtexec',
      `--onnx=${fixed}`,
      `--saveEngine=${engine}`,
      '--inputIOFormats=fp16:chw',
      '--outputIOFormats=fp16:hwc8',
      '--precisionConstraints=obey',
      '--layerPrecisions=*:fp16',
      '--sparsity=enable',
      '--tacticSources=-CUBLAS,+CUDNN',
      '--avgTiming=2',
      '--noCompilationCache',
      '--preview=+aliasedPluginIO1003',
      '--useDLACore=0',
      '--allowGPUFallback',
      '--memPoolSize=workspace:1024MiB',
      '--profilingVerbosity=detailed',
      '--dumpLayerInfo',
      `--exportLayerInfo=${exported}`,
      '--backend=simulated',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // The MiB warning only: trtexec itself would read "1024MiB" as bytes.
    expect(r.stderr.split('\n')[0]).toMatch(/warning: --memPoolSize workspace: "1024MiB" read as 1024M/);
    const events = parseNdjson(r.stdout) as Ev[];
    expect(events.find((e) => e.type === 'build.started')!.options).toMatchObject({
      inputIOFormats: 'fp16:chw',
      outputIOFormats: 'fp16:hwc8',
      precisionConstraints: 'obey',
      layerPrecisions: '*:fp16',
      sparsity: 'enable',
      tacticSources: '-CUBLAS,+CUDNN',
      avgTiming: 2,
      compilationCache: false,
      previewFeatures: '+aliasedPluginIO1003',
      dlaCore: 0,
      allowGPUFallback: true,
      workspaceMiB: 1024,
    });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    // --exportLayerInfo: the layer information of this build, byte for byte; --dumpLayerInfo printed it (on stderr with --json).
    const layers = fs.readFileSync(`${engine}.layers.json`, 'utf8');
    expect(fs.readFileSync(exported, 'utf8')).toBe(layers);
    expect(r.stderr).toContain(layers.trim().slice(0, 200));
    // The manifest records them, so a reuse or check compares them.
    const manifest = JSON.parse(fs.readFileSync(`${engine}.manifest.json`, 'utf8')) as { options: Record<string, unknown> };
    expect(manifest.options).toMatchObject({ inputIOFormats: 'fp16:chw', sparsity: 'enable', dlaCore: 0, compilationCache: false });
  });

  it('refuses per-layer precision constraints on TensorRT 11 with the strong-typing reason, and layer exports without --saveEngine', async () => {
    const r = await runCli(
      ['trtexec', `--onnx=${fixed}`, `--saveEngine=${path.join(dir, 'v11.engine')}`, '--precisionConstraints=obey', '--layerPrecisions=*:fp16', '--backend=simulated'],
      v11,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--precisionConstraints, --layerPrecisions: TensorRT 11\.1\.0 has no per-layer precision constraints: networks are strongly typed/);
    const n = await runCli(['trtexec', `--onnx=${fixed}`, '--dumpLayerInfo', '--backend=simulated']);
    expect(n.code).toBe(2);
    expect(n.stderr).toMatch(/--dumpLayerInfo\/--exportLayerInfo need --saveEngine here/);
  });

  it.each([
    [['--onnx=m.onnx', '--saveEngine=e.engine', '--refit'], /^trt-build-studio trtexec: --refit: refittable engines are not built here/m],
    [['--onnx=m.onnx', '--saveEngine=e.engine', '--frob'], /--frob: not a trtexec build flag this command knows/],
    [['--onnx=m.onnx', '--saveEngine=e.engine', '--memPoolSize=dlaSRAM:1M'], /pool "dlaSRAM" is not supported/],
    [['--saveEngine=e.engine'], /--onnx=<model.onnx> is required/],
    [['--onnx=m.onnx', '--saveEngine=e.engine', '--optShapes=x:1x3', '--optShapes=y:1x3'], /--optShapes is given 2 times: trtexec takes each of/],
    [['--onnx=m.onnx', '--hardwareCompatibilityLevel=ampere'], /--hardwareCompatibilityLevel expects none, ampere\+ or sameComputeCapability, got "ampere"/],
    [[], /needs at least --onnx/],
  ])('%j exits 2 naming the problem', async (args, msg) => {
    const r = await runCli(['trtexec', ...args]);
    expect(r.stderr).toMatch(msg);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  it("takes trtexec's other spellings (with its warnings on stderr) and, without --saveEngine, builds to the default place", async () => {
    const tmp = path.join(dir, 'tmp-default');
    fs.mkdirSync(tmp);
    const r = await runCli(
      [
        'trtexec',
        `--onnx=${dyn}`,
        '--minShapes=input:1x3x32x32',
        '--maxShapes=input:4x3x64x64',
        '--memPoolSize=workspace:512m,tacticSharedMem:48k',
        '--hardwareCompatibilityLevel=Ampere+',
        '--profilingVerbosity=verbose',
        '--buildOnly',
        '--verbose',
        '--backend=simulated',
        '--json',
      ],
      { env: { ...process.env, TMPDIR: tmp } },
    );
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'trt-build-studio trtexec: warning: maxShapes is being broadcasted to optShapes for tensor input',
      'trt-build-studio trtexec: warning: --profilingVerbosity=verbose has been deprecated by --profilingVerbosity=detailed.',
      expect.stringMatching(/^trt-build-studio trtexec: warning: --buildOnly flag has been deprecated by --skipInference flag\./),
    ]);
    const events = parseNdjson(r.stdout) as Ev[];
    const started = events.find((e) => e.type === 'build.started')!;
    expect(started.options).toMatchObject({
      workspaceMiB: 512,
      tacticSharedMemoryKiB: 48,
      hardwareCompatibility: 'ampere_plus',
      profilingVerbosity: 'detailed',
      verboseLog: true,
      shapes: { input: { min: [1, 3, 32, 32], opt: [4, 3, 64, 64], max: [4, 3, 64, 64] } },
    });
    // Where `build` puts an engine it is not told where to write: <model>.sim.<version>.engine.
    const expected = path.join(tmp, 'trt-build-studio', 'engines', 'dyn.sim.10.16.0.engine');
    expect(started.outputPath).toBe(expected);
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded', outputPath: expected });
    expect(fs.statSync(expected).size).toBeGreaterThan(0);
    // --verbose: the backend's VERBOSE lines are in the event stream.
    expect(events.filter((e) => e.type === 'log' && e.severity === 'verbose').length).toBeGreaterThan(5);
  });

  it('without --saveEngine and --json, the output names the file the engine went to', async () => {
    const tmp = path.join(dir, 'tmp-plain');
    fs.mkdirSync(tmp);
    const r = await runCli(['trtexec', `--onnx=${fixed}`, '--backend=simulated'], { env: { ...process.env, TMPDIR: tmp } });
    expect(r.code).toBe(0);
    const expected = path.join(tmp, 'trt-build-studio', 'engines', 'fixed.sim.10.16.0.engine');
    expect(r.stdout).toContain(`→ ${expected}`);
    expect(fs.existsSync(expected)).toBe(true);
  });

  // Issue 34: a dynamic input given no shapes builds as trtexec builds it (each dynamic dimension
  // 1, a warning); only the bad shapes are errors now, one per line.
  it('shape errors: one problem per line; the input given no shapes is not one of them', async () => {
    const engine = path.join(dir, 'noshape.engine');
    const r = await runCli(['trtexec', `--onnx=${dyn}`, `--saveEngine=${engine}`, '--shapes=nosuch:2x3x64x64', '--backend=simulated']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\\n');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toEqual([`trt-build-studio trtexec: shapes given for unknown input "nosuch"; the model's inputs are: "input"`]);
    expect(fs.existsSync(engine)).toBe(false);
  });

  it('a name with a colon: built with the default shape and a warning naming it; its trtexec flags, quoted for the shell, build a range', async () => {
    const colon = writeModel(path.join(dir, 'colon.onnx'), { inputs: [{ name: 'Input:0', shape: ['batch', 3] }] });
    const r = await runCli(['trtexec', `--onnx=${colon}`, `--saveEngine=${path.join(dir, 'colon-default.engine')}`, '--backend=simulated', '--json']);
    expect(r.code).toBe(0);
    const events = parseNdjson(r.stdout) as Ev[];
    expect(events.find((e) => e.type === 'build.started')!.options).toMatchObject({ shapes: { 'Input:0': { min: [1, 3], opt: [1, 3], max: [1, 3] } } });
    expect(events.filter((e) => e.type === 'log' && e.severity === 'warning').map((e) => e.message)).toContain(
      'dynamic input "Input:0" [batch, 3] was given no shapes: built for Input:0: 1x3 (each dynamic dimension 1, min = opt = max, as trtexec does); give shapes to build for a range',
    );
    const suggestion = trtexecShapeArgs([{ name: 'Input:0', min: [1, 3], opt: [4, 3], max: [8, 3] }]);
    expect(suggestion).toBe(`'--minShapes='\\''Input:0'\\'':1x3' '--optShapes='\\''Input:0'\\'':4x3' '--maxShapes='\\''Input:0'\\'':8x3'`);
    // Through a real shell, the quoted flags build.
    const { execFileSync } = await import('node:child_process');
    const argv = JSON.parse(execFileSync('sh', ['-c', `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- ${suggestion}`], { encoding: 'utf8' })) as string[];
    const ok = await runCli(['trtexec', `--onnx=${colon}`, `--saveEngine=${path.join(dir, 'colon.engine')}`, ...argv, '--backend=simulated', '--json']);
    expect(ok.code).toBe(0);
    expect((parseNdjson(ok.stdout) as Ev[]).find((e) => e.type === 'build.started')!.options).toMatchObject({ shapes: { 'Input:0': { min: [1, 3], opt: [4, 3], max: [8, 3] } } });
  });

  it('on TensorRT 11, --fp16 exits 2 with the explanation, before any build', async () => {
    const engine = path.join(dir, 'v11.engine');
    const r = await runCli(['trtexec', `--onnx=${fixed}`, `--saveEngine=${engine}`, '--fp16', '--backend=simulated'], v11);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--fp16: TensorRT 11.1.0 has no precision flags. TensorRT 11 builds strongly typed networks; cast or quantize the model offline (e.g. NVIDIA Model Optimizer).',
    );
    expect(fs.existsSync(engine)).toBe(false);
  });

  it("the issue's pasted line: --workspace=1024 builds with a 1024 MiB workspace and the ignored flags are named once", async () => {
    const engine = path.join(dir, 'pasted.engine');
    const r = await runCli(['trtexec', `--onnx=${fixed}`, `--saveEngine=${engine}`, '--workspace=1024', '--useCudaGraph', '--iterations=100', '--backend=simulated', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'trt-build-studio trtexec: warning: --workspace flag has been deprecated by --memPoolSize flag. (trtexec 10 and later no longer take --workspace.) Read as --memPoolSize=workspace:1024M.',
      'trt-build-studio trtexec: ignored (this builds only; --skipInference implied): --useCudaGraph --iterations=100',
    ]);
    const events = parseNdjson(r.stdout) as Ev[];
    expect(events.find((e) => e.type === 'build.started')!.options).toMatchObject({ workspaceMiB: 1024 });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded', outputPath: engine });
  });

  it('--best: FP16, BF16 and INT8 on 10.x (GPU unknown: simulated), said on stderr; on 11.x exit 2 with the strong-typing explanation', async () => {
    const engine = path.join(dir, 'best.engine');
    const r = await runCli(['trtexec', `--onnx=${fixed}`, `--saveEngine=${engine}`, '--best', '--backend=simulated', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('trt-build-studio trtexec: warning: --best enables FP16, BF16, INT8 (as trtexec 10.16 does with the GPU unknown');
    const events = parseNdjson(r.stdout) as Ev[];
    expect(events.find((e) => e.type === 'build.started')!.options).toMatchObject({ precision: ['fp16', 'bf16', 'int8'] });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });

    const e11 = path.join(dir, 'best11.engine');
    const r11 = await runCli(['trtexec', `--onnx=${fixed}`, `--saveEngine=${e11}`, '--best', '--backend=simulated'], v11);
    expect(r11.code).toBe(2);
    expect(r11.stderr).toMatch(/--best: TensorRT 11\.1\.0 has no --best .*strongly typed/);
    expect(fs.existsSync(e11)).toBe(false);
  });

  it('a removed flag names its successor (exit 2, no build)', async () => {
    const r = await runCli(['trtexec', `--onnx=${fixed}`, '--maxBatch=8', '--backend=simulated']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--maxBatch: implicit batch was removed in TensorRT 10: the batch is part of the input shapes, give it in --minShapes/--optShapes/--maxShapes');
  });

  it('help follows the version in use', async () => {
    const h11 = await runCli(['trtexec', '--help'], v11);
    expect(h11.code).toBe(0);
    expect(h11.stdout).toContain('TensorRT 11.1.0');
    expect(h11.stdout).not.toMatch(/--fp16|--stronglyTyped/);
    expect(h11.stdout).toContain('--setBuildRoute');
    const h10 = await runCli(['trtexec', '--help'], v103);
    expect(h10.stdout).toMatch(/--fp16 --bf16 --int8 --fp8 --int4/);
    expect(h10.stdout).not.toContain('--setBuildRoute');
  });
});

describe('build: shape errors in its own flags', () => {
  it('one problem per line, no literal \\n; an input given no shapes is not a problem', async () => {
    const r = await runCli(['build', dyn, '-o', path.join(dir, 'b-noshape.engine'), '--optShapes', 'nosuch:1', '--backend', 'simulated']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\\n');
    expect(r.stderr).not.toContain('trtexec');
    expect(r.stderr.trimEnd().split('\n')).toEqual([`trt-build-studio build: shapes given for unknown input "nosuch"; the model's inputs are: "input"`]);
  });
});

describe('build: version-dependent options', () => {
  it('on TensorRT 11, --fp16 exits 2 with the explanation', async () => {
    const r = await runCli(['build', fixed, '-o', path.join(dir, 'b11.engine'), '--fp16', '--backend', 'simulated'], v11);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--fp16: TensorRT 11.1.0 has no precision flags. TensorRT 11 builds strongly typed networks');
  });

  it('--strongly-typed with a precision flag exits 2 (TensorRT rejects it)', async () => {
    const r = await runCli(['build', fixed, '-o', path.join(dir, 'st.engine'), '--strongly-typed', '--int8', '--backend', 'simulated']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--strongly-typed cannot be combined with --int8/);
  });

  it('a library older than the flag: --fp4 and same_compute_capability on 10.3', async () => {
    const r1 = await runCli(['build', fixed, '-o', path.join(dir, 'a.engine'), '--fp4', '--backend', 'simulated'], v103);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/--fp4 needs TensorRT 10\.8 or newer; the build would run on TensorRT 10\.3\.0/);
    const r2 = await runCli(['build', fixed, '-o', path.join(dir, 'a.engine'), '--hardware-compatibility', 'same_compute_capability', '--backend', 'simulated'], v103);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/--hardware-compatibility "same_compute_capability" needs TensorRT 10\.9/);
  });

  it('--build-route only on 11.1+', async () => {
    const r = await runCli(['build', fixed, '-o', path.join(dir, 'r.engine'), '--build-route', 'fast', '--backend', 'simulated'], v103);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--build-route needs TensorRT 11\.1 or newer/);
  });

  it('help follows the version in use: no precision flags on 11, deprecation of --int4/--fp4 on 10.12+', async () => {
    const h11 = await runCli(['build', '--help'], v11);
    expect(h11.code).toBe(0);
    expect(h11.stdout).not.toMatch(/--fp16|--strongly-typed/);
    expect(h11.stdout).toContain('--build-route');
    expect(h11.stdout).toContain('cast or quantize the model offline');
    const h16 = await runCli(['build', '--help']);
    expect(h16.stdout).toMatch(/--fp16 --bf16 --int8 --fp8\n/);
    expect(h16.stdout).toMatch(/--int4 --fp4\s+deprecated: only enable plugins with these I\/O types/);
    expect(h16.stdout).not.toContain('--build-route');
  });

  it('takes trtexec-style --minShapes/--optShapes/--maxShapes, --device and --infer-cache-misses', async () => {
    const r = await runCli([
      'build',
      dyn,
      '-o',
      path.join(dir, 'mm.engine'),
      '--minShapes',
      'input:1x3x32x32',
      '--optShapes=input:2x3x32x32',
      '--maxShapes',
      'input:2x3x32x32',
      '--device',
      '0',
      '--infer-cache-misses',
      '--tactic-shared-memory',
      '48',
      '--tactic-dram=512',
      '--backend',
      'simulated',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const started = (parseNdjson(r.stdout) as Ev[]).find((e) => e.type === 'build.started')!;
    expect(started.options).toMatchObject({
      device: 0,
      inferCacheMisses: true,
      tacticSharedMemoryKiB: 48,
      tacticDramMiB: 512,
      shapes: { input: { min: [1, 3, 32, 32], opt: [2, 3, 32, 32], max: [2, 3, 32, 32] } },
    });
  });

  it.each([
    [['--workspace', String(2 ** 60)], /--workspace expects a whole number from 1 to 8589934592/],
    [['--max-aux-streams', '99999999999'], /--max-aux-streams expects a whole number from 0 to 2147483647/],
    [['--device=-1'], /--device expects a whole number/],
    [['--tactic-shared-memory', '0'], /--tactic-shared-memory expects a whole number from 1 to/],
    [['--tactic-dram', '1.5'], /--tactic-dram expects a whole number from 1 to/],
    [['--shapes', 'input:1x3x2x2', '--optShapes', 'input:1x3x2x2'], /"input" are given both with --shapes and with --minShapes/],
  ])('%j is a usage error naming the flag', async (args, msg) => {
    const r = await runCli(['build', dyn, '-o', path.join(dir, 'x.engine'), ...args]);
    expect(r.stderr).toMatch(msg);
    expect(r.code).toBe(2);
  });
});
