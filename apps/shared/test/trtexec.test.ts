import { describe, expect, it } from 'vitest';
import { BuildOptions, type BuildOptionsInput, type Precision, type ShapeRange } from '../protocol.js';
import { trtCapabilities } from '../trt-capabilities.js';
import {
  formatTrtexecCommand,
  parsePoolSize,
  parseShapeList,
  parseTrtexecArgs,
  trtexecArgs,
  TrtexecUsageError,
} from '../trtexec.js';

const base = ['--onnx=m.onnx', '--saveEngine=m.engine'];
const parse = (...a: string[]) => parseTrtexecArgs([...base, ...a]);
const fails = (args: string[], msg: RegExp) => {
  expect(() => parseTrtexecArgs([...base, ...args])).toThrow(TrtexecUsageError);
  expect(() => parseTrtexecArgs([...base, ...args])).toThrow(msg);
};

describe('parseTrtexecArgs', () => {
  it('reads a typical trtexec build command', () => {
    const r = parseTrtexecArgs([
      '--onnx=models/yolo.onnx',
      '--saveEngine=out/yolo.engine',
      '--minShapes=images:1x3x640x640',
      '--optShapes=images:4x3x640x640',
      '--maxShapes=images:8x3x640x640',
      '--memPoolSize=workspace:4096M,tacticSharedMem:48K',
      '--builderOptimizationLevel=5',
      '--timingCacheFile=yolo.cache',
      '--fp16',
      '--noTF32',
      '--profilingVerbosity=detailed',
      '--hardwareCompatibilityLevel=ampere+',
      '--maxAuxStreams=2',
      '--device=1',
      '--skipInference',
      '--backend',
      'simulated',
      '--json',
    ]);
    expect(r).toEqual({
      modelPath: 'models/yolo.onnx',
      enginePath: 'out/yolo.engine',
      json: true,
      options: {
        backend: 'simulated',
        timingCache: 'yolo.cache',
        optLevel: 5,
        workspaceMiB: 4096,
        tacticSharedMemoryKiB: 48,
        shapes: { images: { min: [1, 3, 640, 640], opt: [4, 3, 640, 640], max: [8, 3, 640, 640] } },
        precision: ['fp16'],
        tf32: false,
        profilingVerbosity: 'detailed',
        hardwareCompatibility: 'ampere_plus',
        maxAuxStreams: 2,
        device: 1,
      },
    });
  });

  it('follows trtexec for pool sizes: MiB by default, B/K/M/G base 2, decimals rounded down to bytes', () => {
    expect(parsePoolSize('f', '1024')).toBe(1024 * 2 ** 20);
    expect(parsePoolSize('f', '2G')).toBe(2 * 2 ** 30);
    expect(parsePoolSize('f', '0.5G')).toBe(512 * 2 ** 20);
    expect(parsePoolSize('f', '64K')).toBe(65536);
    expect(parsePoolSize('f', '100B')).toBe(100);
    expect(parsePoolSize('f', '0.3B')).toBe(0);
    expect(parse('--memPoolSize=workspace:1G').options.workspaceMiB).toBe(1024);
    expect(parse('--memPoolSize=workspace:2048').options.workspaceMiB).toBe(2048);
    expect(parse('--memPoolSize=tacticSharedMem:0.25M').options.tacticSharedMemoryKiB).toBe(256);
    expect(parse('--memPoolSize=tacticDram:512M').options.tacticDramMiB).toBe(512);
  });

  it('reads shape specs as trtexec does: quoted names, scalars, only --optShapes', () => {
    expect(parseShapeList('--minShapes', "'Input:0':1x3,b:scalar,c:,d:-1x0,e:f:2")).toEqual([
      ['Input:0', [1, 3]],
      ['b', []],
      ['c', []],
      ['d', [-1, 0]],
      ['e:f', [2]],
    ]);
    expect(parse('--optShapes=x:2x3').options.shapes).toEqual({ x: { min: [2, 3], opt: [2, 3], max: [2, 3] } });
    expect(parse('--shapes=x:2x3').options.shapes).toEqual({ x: { min: [2, 3], opt: [2, 3], max: [2, 3] } });
    // Values below 1 cannot be dims: they are shape-tensor values.
    expect(parse('--minShapes=t:-1x4', '--optShapes=t:-1x8', '--maxShapes=t:-1x16').options).toEqual({
      shapeValues: { t: { min: [-1, 4], opt: [-1, 8], max: [-1, 16] } },
    });
    // A known shape-tensor input takes values even when they look like dims.
    const r = parseTrtexecArgs([...base, '--optShapes=x:1x3,t:5'], ['t']);
    expect(r.options).toEqual({ shapes: { x: { min: [1, 3], opt: [1, 3], max: [1, 3] } }, shapeValues: { t: { min: [5], opt: [5], max: [5] } } });
  });

  it.each([
    [['--frob=1'], /unsupported trtexec flag --frob/],
    [['--fp4'], /unsupported trtexec flag --fp4/],
    [['--best'], /unsupported trtexec flag --best/],
    [['--workspace=1024'], /unsupported trtexec flag --workspace/],
    [['m.onnx'], /unexpected argument "m.onnx"/],
    [['--minShapes=x:1x3', '--maxShapes=x:4x3'], /--optShapes missing/],
    [["--minShapes=x:1x3", "--optShapes=y:1x3", "--maxShapes=x:4x3"], /"x" is missing from --optShapes: every input needs min, opt and max/],
    [["--minShapes=x:1x3", "--optShapes=x:1x3,y:1x3", "--maxShapes=x:4x3"], /"y" is missing from --minShapes and --maxShapes/],
    [['--optShapes=x:1x3,x:2x3'], /"x" is given twice/],
    [['--optShapes=x:1x3', '--optShapes=x:2x3'], /--optShapes: "x" is given twice/],
    [['--optShapes=x1x3'], /"x1x3" has no ":<dims>"/],
    [['--optShapes=x:1xAx3'], /"1xAx3" for "x" is not whole numbers/],
    [["--optShapes='x:1x3"], /unterminated quote/],
    [['--memPoolSize=dlaSRAM:1M'], /pool "dlaSRAM" is not supported here .*DLA pools/],
    [['--memPoolSize=workspace:1.5M'], /workspace size "1.5M" must be a positive whole number of MiB/],
    [['--memPoolSize=workspace:lots'], /size "lots" is not a number/],
    [['--memPoolSize=workspace:100000000G'], /workspace size "100000000G" is too large \(at most 8589934592 MiB\)/],
    [['--builderOptimizationLevel=7'], /--builderOptimizationLevel expects a whole number from 0 to 5, got "7"/],
    [['--maxAuxStreams=99999999999'], /--maxAuxStreams expects a whole number from 0 to 2147483647/],
    [['--device=-1'], /--device expects a whole number/],
    [['--profilingVerbosity=loud'], /--profilingVerbosity expects layer_names_only, detailed or none/],
    [['--hardwareCompatibilityLevel=ampere'], /expects none, ampere\+ or sameComputeCapability/],
    [['--fp16=1'], /--fp16 takes no value/],
    [['--timingCacheFile'], /--timingCacheFile needs a value/],
    [['--builderOptimizationLevel=1', '--builderOptimizationLevel=2'], /given 2 times with different values/],
    [['--shapes=x:1x3', '--optShapes=x:1x3'], /--shapes cannot be combined/],
  ])('%j exits with a usage error naming the problem', (args, msg) => fails(args, msg));

  it('needs the model and the engine path', () => {
    expect(() => parseTrtexecArgs(['--saveEngine=e'])).toThrow(/--onnx=<model.onnx> is required/);
    expect(() => parseTrtexecArgs(['--onnx=m.onnx'])).toThrow(/--saveEngine=<file> is required/);
  });
});

describe('formatTrtexecCommand follows the TensorRT version', () => {
  const o: BuildOptionsInput = { precision: ['fp16', 'int8'], stronglyTyped: false, buildRoute: 'fast' };
  it('10.x: precision flags, no build route', () => {
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', options: o, trtVersion: '10.16.1' })).toBe(
      'trtexec --onnx=m.onnx --saveEngine=m.engine --fp16 --int8 --skipInference',
    );
  });
  it('11.1: no precision flags, no --stronglyTyped (implied), the build route', () => {
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', options: { ...o, stronglyTyped: true }, trtVersion: '11.1.0' })).toBe(
      'trtexec --onnx=m.onnx --saveEngine=m.engine --setBuildRoute=fast --skipInference',
    );
  });
  it('10.3: int4 yes, fp4 never (trtexec has no flag for it)', () => {
    expect(trtexecArgs({ modelPath: 'm.onnx', options: { precision: ['int4', 'fp4'] }, trtVersion: '10.3.0' })).toContain('--int4');
    expect(trtexecArgs({ modelPath: 'm.onnx', options: { precision: ['fp4'] }, trtVersion: '10.16.0' }).join(' ')).not.toContain('fp4');
  });
});

// ───────────────────────── round trip over many combinations ─────────────────────────

/** A small deterministic generator, so failures reproduce. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function randomOptions(r: () => number, version: string): BuildOptionsInput {
  const caps = trtCapabilities(version);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const maybe = (p = 0.5) => r() < p;
  const o: BuildOptionsInput = {};
  if (maybe()) o.optLevel = pick([0, 1, 2, 3, 4, 5]);
  if (maybe()) o.workspaceMiB = pick([1, 256, 4096, 2 ** 33]);
  if (maybe(0.3)) o.tacticSharedMemoryKiB = pick([1, 48, 228]);
  if (maybe()) o.timingCache = pick(['cache.bin', '/tmp/my caches/t.cache', "it's.cache"]);
  if (maybe()) {
    const shapes: Record<string, ShapeRange> = { images: { min: [1, 3, 224, 224], opt: [4, 3, 224, 224], max: [8, 3, 224, 224] } };
    if (maybe()) shapes['Input:0'] = { min: [1, 16], opt: [1, 64], max: [2, 128] };
    if (maybe(0.2)) shapes.s = { min: [], opt: [], max: [] };
    o.shapes = shapes;
  }
  if (maybe(0.4)) o.shapeValues = { target: { min: [1, -1], opt: [2, -1], max: [4, -1] } };
  if (!caps.stronglyTypedImplied && maybe()) {
    if (maybe(0.3)) o.stronglyTyped = true;
    else o.precision = caps.precisions.filter((p: Precision) => p !== 'fp4' && maybe(0.4));
    if (o.precision?.length === 0) delete o.precision;
  }
  if (maybe(0.3)) o.tf32 = false;
  if (maybe(0.3)) o.profilingVerbosity = pick(['layer_names_only', 'none', 'detailed'] as const);
  if (maybe(0.3)) o.hardwareCompatibility = pick(caps.hardwareCompatibility);
  if (maybe(0.3)) o.maxAuxStreams = pick([0, 1, 7, 2 ** 31 - 1]);
  if (maybe(0.3)) o.device = pick([0, 1, 3]);
  if (caps.buildRoutes && maybe(0.3)) o.buildRoute = pick(['default', 'fast-route']);
  return o;
}

describe('round trip: a copied command parses back into the same build', () => {
  for (const version of ['10.0.0', '10.3.0', '10.8.0', '10.9.0', '10.16.1', '11.0.0', '11.1.0']) {
    it(`TensorRT ${version}: 300 option combinations`, () => {
      const r = rng(Number(version.replace(/\./g, '')));
      const caps = trtCapabilities(version);
      for (let i = 0; i < 300; i++) {
        const options = randomOptions(r, version);
        expect(BuildOptions.safeParse(options).success).toBe(true);
        const args = trtexecArgs({ modelPath: 'dir/model v2.onnx', enginePath: 'out.engine', options, trtVersion: version });
        if (caps.stronglyTypedImplied) expect(args.filter((a) => /^--(fp16|bf16|int8|fp8|int4|stronglyTyped)$/.test(a))).toEqual([]);
        const back = parseTrtexecArgs(args, ['target']);
        expect(back.modelPath).toBe('dir/model v2.onnx');
        expect(back.enginePath).toBe('out.engine');
        // What trtexec cannot say about 11 (stronglyTyped: implied) is not expected back.
        const expected = { ...options };
        if (caps.stronglyTypedImplied) delete expected.stronglyTyped;
        expect(back.options).toEqual(expected);
      }
    });
  }

  it('the quoted command line splits back into the same arguments (shell quoting)', () => {
    const args = trtexecArgs({ modelPath: "/home/me/my model's.onnx", options: { timingCache: '/c/a b.cache' } });
    const cmd = formatTrtexecCommand({ modelPath: "/home/me/my model's.onnx", options: { timingCache: '/c/a b.cache' } });
    expect(shellSplit(cmd)).toEqual(['trtexec', ...args]);
  });
});

/** Minimal POSIX word splitting for bare words and single-quoted parts (all shellQuote emits). */
function shellSplit(cmd: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i];
    if (c === "'") {
      const end = cmd.indexOf("'", i + 1);
      cur += cmd.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '\\') {
      cur += cmd[++i];
      inWord = true;
    } else if (c === ' ') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
