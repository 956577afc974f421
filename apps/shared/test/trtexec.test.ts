import { describe, expect, it } from 'vitest';
import { BuildOptions, type BuildOptionsInput, type Precision, type ShapeRange } from '../protocol.js';
import { trtCapabilities } from '../trt-capabilities.js';
import { formatTrtexecCommand, parsePoolSize, parseShapeList, parseTrtexecArgs, trtexecArgs, trtexecCopy, trtexecShapeArgs, trtexecWarnings } from '../trtexec.js';
import { bestPrecisions, ignoredFlagsNote, INFERENCE_ONLY_FLAGS } from '../trtexec-other-flags.js';
import type { BackendInfo } from '../protocol.js';
import { UsageError } from '../usage-error.js';

const base = ['--onnx=m.onnx', '--saveEngine=m.engine'];
const parse = (...a: string[]) => parseTrtexecArgs([...base, ...a]);
const fails = (args: string[], msg: RegExp) => {
  expect(() => parseTrtexecArgs([...base, ...args])).toThrow(UsageError);
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
      warnings: [],
      ignored: [],
      best: false,
      layerInfo: { dump: false },
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
    [['--frob=1'], /^--frob: not a trtexec build flag this command knows/],
    [['--fp4'], /^--fp4: not a trtexec build flag/],
    [['--best=1'], /--best takes no value/],
    [['--workspace=1.5'], /--workspace: "1.5" must be a positive whole number of MiB/],
    [['--workspace=1024', '--memPoolSize=workspace:2G'], /--workspace=1024 and --memPoolSize=workspace:2048M disagree/],
    [['--maxBatch=8'], /--maxBatch: implicit batch was removed in TensorRT 10: .*--minShapes\/--optShapes\/--maxShapes/],
    [['--heuristic'], /--heuristic: .*--builderOptimizationLevel=<N>/],
    [['--weightless'], /--weightless: .*--stripWeights/],
    [['--uff=m.uff'], /--uff: the UFF parser was removed in TensorRT 10: export the model to ONNX/],
    [['--deploy=m.prototxt'], /--deploy: the Caffe parser was removed/],
    [['--calib=c.cache'], /--calib: .*Q\/DQ/],
    [['--nvtxMode=loud'], /--nvtxMode expects layer_names_only, detailed or none/],
    [['--refit'], /^--refit: refittable engines are not built here/],
    [['--sparsity=force'], /^--sparsity=force: trtexec deprecated it .*--sparsity=enable/],
    [['--inputIOFormats=fp16:nchw'], /^--inputIOFormats: inputIOFormats: "nchw" is not a format/],
    [['--layerPrecisions=conv1'], /^--layerPrecisions: .*"conv1" is not <layer name>:<type>/],
    [['--tacticSources=CUBLAS'], /^--tacticSources: .*must start with \+ or -/],
    [['--tacticSources=+CUBLAS,-cublas'], /CUBLAS is both enabled and disabled/],
    [['--preview=+fastMath'], /"fastMath" is not a preview feature/],
    [['--precisionConstraints=strict'], /^--precisionConstraints: /],
    [['--avgTiming=0'], /--avgTiming expects a whole number from 1/],
    [['--exportLayerInfo='], /--exportLayerInfo needs a file/],
    [['--memPoolSize=workspace:1024MB'], /size "1024MB" is not a number/],
    [['m.onnx'], /unexpected argument "m.onnx"/],
    [['--minShapes=x:1x3', '--optShapes=y:1x3', '--maxShapes=x:4x3'], /"x" is missing from --optShapes: every input needs min, opt and max/],
    [['--minShapes=x:1x3', '--optShapes=x:1x3,y:1x3', '--maxShapes=x:4x3'], /"y" is missing from --minShapes and --maxShapes/],
    [['--optShapes=x:1x3,x:2x3'], /"x" is given twice/],
    [['--optShapes=x:1x3', '--optShapes=y:2x3'], /--optShapes is given 2 times: trtexec takes each of .* once .*--profile.*list every input in one flag/],
    [['--minShapes=x:1x3', '--minShapes=x:1x3', '--maxShapes=x:4x3'], /--minShapes is given 2 times/],
    [['--shapes=x:1x3', '--shapes=y:1x3'], /--shapes is given 2 times/],
    [['--hardwareCompatibilityLevel=NONE'], /expects none, ampere\+ or sameComputeCapability, got "NONE"/],
    [['--profilingVerbosity=Verbose'], /--profilingVerbosity expects layer_names_only, detailed or none, got "Verbose"/],
    [['--memPoolSize=workspace:512x'], /size "512x" is not a number/],
    [['--verbose=1'], /--verbose takes no value/],
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

  it('needs the model; without --saveEngine the engine goes to the default place', () => {
    expect(() => parseTrtexecArgs(['--saveEngine=e'])).toThrow(/--onnx=<model.onnx> is required/);
    const r = parseTrtexecArgs(['--onnx=m.onnx']);
    expect(r.enginePath).toBeUndefined();
    expect('enginePath' in r).toBe(false);
    expect(() => parseTrtexecArgs(['--onnx=m.onnx', '--saveEngine='])).toThrow(/--saveEngine needs a file name/);
  });

  it('reads KiB/MiB/GiB as meant, warning that trtexec itself would read them as bytes; a copy writes M', () => {
    const r = parse('--memPoolSize=workspace:1024MiB,tacticSharedMem:48KiB');
    expect(r.options).toEqual({ workspaceMiB: 1024, tacticSharedMemoryKiB: 48 });
    expect(r.warnings).toEqual([
      '--memPoolSize workspace: "1024MiB" read as 1024M (MiB); trtexec itself reads the last letter only and would take it as 1024 bytes, so write 1024M.',
      '--memPoolSize tacticSharedMem: "48KiB" read as 48K (KiB); trtexec itself reads the last letter only and would take it as 48 bytes, so write 48K.',
    ]);
    expect(parse('--memPoolSize=workspace:1gib').options.workspaceMiB).toBe(1024);
    expect(parse('--memPoolSize=workspace:1G').options.workspaceMiB).toBe(1024);
    expect(parse('--workspace=2GiB').options.workspaceMiB).toBe(2048);
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', enginePath: 'm.engine', options: r.options })).toContain('--memPoolSize=workspace:1024M,tacticSharedMem:48K');
  });

  it("carries trtexec's other build flags into the options, and a copied command says them back", () => {
    const args = [
      '--inputIOFormats=fp16:chw,int8:chw4+hwc8',
      '--outputIOFormats=fp16:hwc8',
      '--precisionConstraints=obey',
      '--layerPrecisions=conv1:fp16,*:fp32',
      '--layerOutputTypes=split:fp16+fp32',
      '--sparsity=enable',
      '--tacticSources=-CUBLAS,+cudnn',
      '--avgTiming=4',
      '--noCompilationCache',
      '--preview=+aliasedPluginIO1003',
      '--useDLACore=0',
      '--allowGPUFallback',
    ];
    const r = parse(...args);
    expect(r.options).toEqual({
      inputIOFormats: 'fp16:chw,int8:chw4+hwc8',
      outputIOFormats: 'fp16:hwc8',
      precisionConstraints: 'obey',
      layerPrecisions: 'conv1:fp16,*:fp32',
      layerOutputTypes: 'split:fp16+fp32',
      sparsity: 'enable',
      tacticSources: '-CUBLAS,+cudnn',
      avgTiming: 4,
      compilationCache: false,
      previewFeatures: '+aliasedPluginIO1003',
      dlaCore: 0,
      allowGPUFallback: true,
    });
    expect(trtexecArgs({ modelPath: 'm.onnx', options: r.options })).toEqual(expect.arrayContaining(args));
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', enginePath: 'm.engine', options: r.options })).toContain("'--layerPrecisions=conv1:fp16,*:fp32'");
    expect(parseTrtexecArgs(trtexecArgs({ modelPath: 'm.onnx', options: r.options })).options).toEqual(r.options);
  });

  it('takes --dumpLayerInfo and --exportLayerInfo=<file> for after the build, and notes --monitorMemory', () => {
    expect(parse('--dumpLayerInfo', '--exportLayerInfo=out/layers.json', '--profilingVerbosity=detailed')).toMatchObject({
      layerInfo: { dump: true, exportPath: 'out/layers.json' },
      options: { profilingVerbosity: 'detailed' },
    });
    expect(parse('--monitorMemory').warnings).toEqual([expect.stringMatching(/^--monitorMemory: .*always watched here/)]);
  });

  it('takes pool sizes with lower-case suffixes, as trtexec (which upper-cases them)', () => {
    expect(parsePoolSize('f', '512m')).toBe(512 * 2 ** 20);
    expect(parsePoolSize('f', '2g')).toBe(2 * 2 ** 30);
    expect(parsePoolSize('f', '64k')).toBe(65536);
    expect(parsePoolSize('f', '100b')).toBe(100);
    expect(parse('--memPoolSize=workspace:512m,tacticSharedMem:48k').options).toEqual({ workspaceMiB: 512, tacticSharedMemoryKiB: 48 });
    expect(parse('--memPoolSize=workspace:0.5g').options.workspaceMiB).toBe(512);
  });

  it('reads hardware levels as trtexec: "none" exactly, ampere+ and sameComputeCapability in any case', () => {
    for (const v of ['ampere+', 'Ampere+', 'AMPERE+']) expect(parse(`--hardwareCompatibilityLevel=${v}`).options.hardwareCompatibility).toBe('ampere_plus');
    for (const v of ['sameComputeCapability', 'samecomputecapability', 'SAMECOMPUTECAPABILITY']) {
      expect(parse(`--hardwareCompatibilityLevel=${v}`).options.hardwareCompatibility).toBe('same_compute_capability');
    }
    expect(parse('--hardwareCompatibilityLevel=none').options.hardwareCompatibility).toBe('none');
    expect(parse('--hardwareCompatibilityLevel=ampere+').warnings).toEqual([]);
  });

  it('reads --versionCompatible and its alias --vc, and --excludeLeanRuntime, as trtexec (sampleOptions.cpp)', () => {
    expect(parse('--versionCompatible').options.versionCompatible).toBe(true);
    expect(parse('--vc').options).toEqual({ versionCompatible: true });
    expect(parse('--vc', '--excludeLeanRuntime').options).toEqual({ versionCompatible: true, excludeLeanRuntime: true });
    expect(parse().options.versionCompatible).toBeUndefined();
    expect(() => parse('--vc=1')).toThrow(/--vc takes no value/);
    // The copy writes the long spelling, never the alias.
    const copied = formatTrtexecCommand({ modelPath: '/m/model.onnx', options: { versionCompatible: true, excludeLeanRuntime: true } });
    expect(copied).toContain('--versionCompatible --excludeLeanRuntime');
    expect(copied).not.toContain('--vc');
  });

  it("maps the deprecated profiling verbosities with trtexec's warnings", () => {
    const v = parse('--profilingVerbosity=verbose');
    expect(v.options.profilingVerbosity).toBe('detailed');
    expect(v.warnings).toEqual(['--profilingVerbosity=verbose has been deprecated by --profilingVerbosity=detailed.']);
    const d = parse('--profilingVerbosity=default');
    expect(d.options.profilingVerbosity).toBe('layer_names_only');
    expect(d.warnings).toEqual(['--profilingVerbosity=default has been deprecated by --profilingVerbosity=layer_names_only.']);
    expect(parse('--profilingVerbosity=detailed').warnings).toEqual([]);
  });

  it('accepts --buildOnly (old --skipInference) with a word on what it does', () => {
    const b = parse('--buildOnly');
    expect(b.options).toEqual({});
    expect(b.warnings).toEqual([expect.stringMatching(/^--buildOnly flag has been deprecated by --skipInference flag\. .*no longer take --buildOnly/)]);
  });

  it('--verbose turns on the verbose log and nothing else', () => {
    const v = parse('--verbose');
    expect(v.options).toEqual({ verboseLog: true });
    expect(v.warnings).toEqual([]);
    expect(parse().options.verboseLog).toBeUndefined();
  });

  it('the copied command says --verbose exactly when the verbose log is on', () => {
    const on = trtexecArgs({ modelPath: 'm.onnx', enginePath: 'm.engine', options: { verboseLog: true } });
    expect(on.filter((a) => a === '--verbose')).toEqual(['--verbose']);
    expect(trtexecArgs({ modelPath: 'm.onnx', enginePath: 'm.engine', options: { verboseLog: false } })).not.toContain('--verbose');
    expect(trtexecWarnings({ modelPath: 'm.onnx', options: { verboseLog: true } })).toEqual([]);
  });

  it.each([
    // given, expected min/opt/max sources, trtexec's warnings (processShapes)
    [['min', 'max'], { min: 'min', opt: 'max', max: 'max' }, ['maxShapes is being broadcasted to optShapes for tensor x']],
    [['min', 'opt'], { min: 'min', opt: 'opt', max: 'opt' }, ['optShapes is being broadcasted to maxShapes for tensor x']],
    [['opt', 'max'], { min: 'opt', opt: 'opt', max: 'max' }, ['optShapes is being broadcasted to minShapes for tensor x']],
    [['opt'], { min: 'opt', opt: 'opt', max: 'opt' }, ['optShapes is being broadcasted to minShapes for tensor x', 'optShapes is being broadcasted to maxShapes for tensor x']],
    [['min'], { min: 'min', opt: 'min', max: 'min' }, ['minShapes is being broadcasted to optShapes for tensor x', 'minShapes is being broadcasted to maxShapes for tensor x']],
    [['max'], { min: 'max', opt: 'max', max: 'max' }, ['maxShapes is being broadcasted to minShapes for tensor x', 'maxShapes is being broadcasted to optShapes for tensor x']],
  ] as const)('fills missing shape flags as trtexec does: %j', (given, sources, warnings) => {
    const dims = { min: [1, 3], opt: [4, 3], max: [8, 3] };
    const r = parse(...given.map((w) => `--${w}Shapes=x:${dims[w].join('x')}`));
    expect(r.options.shapes).toEqual({ x: { min: dims[sources.min], opt: dims[sources.opt], max: dims[sources.max] } });
    expect(r.warnings).toEqual(warnings);
  });

  it('--shapes makes a fixed profile without warnings (trtexec copies it silently)', () => {
    const r = parse('--shapes=x:2x3,y:5');
    expect(r.options.shapes).toEqual({ x: { min: [2, 3], opt: [2, 3], max: [2, 3] }, y: { min: [5], opt: [5], max: [5] } });
    expect(r.warnings).toEqual([]);
  });
});

describe('formatTrtexecCommand follows the TensorRT version', () => {
  const o: BuildOptionsInput = { precision: ['fp16', 'int8'], stronglyTyped: false, buildRoute: 'fast' };
  it('10.x: precision flags, no build route', () => {
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', options: o, trtVersion: '10.16.1' })).toBe('trtexec --onnx=m.onnx --saveEngine=m.engine --fp16 --int8 --skipInference');
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

describe('trtexecCopy: what trtexec cannot say is said, never dropped silently', () => {
  const sim = { name: 'simulated', available: true, version: '0.1.0', emulates: '10.16.0' } as BackendInfo;
  const trt = { name: 'tensorrt', available: true, version: '10.16.1', library: { version: '10.16.1' }, gpu: { name: 'NVIDIA GeForce RTX 4090' } } as unknown as BackendInfo;

  it('names the engine as the service would write it, beside the model', () => {
    expect(trtexecCopy({ modelPath: 'multi.onnx', options: {}, backend: sim }).text).toContain('--saveEngine=multi.sim.10.16.0.engine');
    expect(trtexecCopy({ modelPath: '/m/résnet 50.onnx', options: {}, backend: trt }).text).toContain(`'--saveEngine=/m/résnet 50.GeForce-RTX-4090.10.16.1.engine'`);
    // Without a backend (none known yet): the model's name with .engine, as before.
    expect(trtexecCopy({ modelPath: 'multi.onnx', options: {} }).text).toContain('--saveEngine=multi.engine');
  });

  it('a clean command has no warnings', () => {
    expect(trtexecCopy({ modelPath: 'm.onnx', options: { workspaceMiB: 64, shapes: { 'Input:0': { min: [1], opt: [2], max: [3] } } } }).warnings).toEqual([]);
  });

  it('flags an input name trtexec would split at its comma, or read a quote in', () => {
    const c = trtexecCopy({ modelPath: 'm.onnx', options: { shapes: { 'a,b': { min: [1], opt: [2], max: [3] } }, shapeValues: { "it's": { min: [1], opt: [1], max: [1] } } } });
    expect(trtexecArgs({ modelPath: 'm.onnx', options: { shapes: { 'a,b': { min: [1], opt: [2], max: [3] } } } })).toContain(`--minShapes='a,b':1`);
    expect(c.warnings).toEqual([
      'Input "a,b": trtexec splits shape lists on "," before it reads quotes, so trtexec would reject this command (trt-build-studio trtexec reads it).',
      `Input "it's": trtexec reads "'" as the quote around a name, so trtexec would reject this command (trt-build-studio trtexec reads it).`,
    ]);
  });

  it('says tactic DRAM has no trtexec equivalent (no --memPoolSize pool in 10.x or 11.x) and leaves it out', () => {
    const c = trtexecCopy({ modelPath: 'm.onnx', options: { tacticDramMiB: 512, workspaceMiB: 64 } });
    expect(c.text).toContain('--memPoolSize=workspace:64M ');
    expect(c.text).not.toMatch(/tacticDram|512/);
    expect(c.warnings).toEqual([
      "Tactic DRAM (512 MiB) has no trtexec equivalent: trtexec's --memPoolSize has no tactic DRAM pool (only workspace, tacticSharedMem and DLA pools), so the command leaves it out.",
    ]);
  });

  it('says inferring cache misses has no trtexec equivalent (trtexec has no editable timing cache)', () => {
    const c = trtexecCopy({ modelPath: 'm.onnx', options: { inferCacheMisses: true } });
    expect(c.text).toBe('trtexec --onnx=m.onnx --saveEngine=m.engine --skipInference');
    expect(c.warnings).toEqual(['Inferring timing-cache misses has no trtexec equivalent (trtexec has no editable timing cache), so the command leaves it out.']);
  });

  it('says FP4 has no trtexec flag', () => {
    expect(trtexecCopy({ modelPath: 'm.onnx', options: { precision: ['fp16', 'fp4'] }, trtVersion: '10.16.1' }).warnings).toEqual([
      'FP4 has no trtexec flag, so the command leaves it out.',
    ]);
  });

  it('writes shape suggestions in trtexec flags, quoted for trtexec and the shell', () => {
    const text = trtexecShapeArgs([
      { name: 'x', min: [1, 3], opt: [4, 3], max: [8, 3] },
      { name: 'Input:0', min: [1], opt: [2], max: [3] },
    ]);
    expect(shellSplit(text)).toEqual([`--minShapes=x:1x3,'Input:0':1`, `--optShapes=x:4x3,'Input:0':2`, `--maxShapes=x:8x3,'Input:0':3`]);
    expect(parseTrtexecArgs([...base, ...shellSplit(text)]).options.shapes).toEqual({ x: { min: [1, 3], opt: [4, 3], max: [8, 3] }, 'Input:0': { min: [1], opt: [2], max: [3] } });
  });
});

describe('trtexec lines as pasted: old spellings, inference-only flags, --best', () => {
  it('--workspace=N is the workspace pool in MiB, with the deprecation note', () => {
    const r = parse('--workspace=1024');
    expect(r.options).toEqual({ workspaceMiB: 1024 });
    expect(r.warnings).toEqual([
      '--workspace flag has been deprecated by --memPoolSize flag. (trtexec 10 and later no longer take --workspace.) Read as --memPoolSize=workspace:1024M.',
    ]);
    expect(parse('--workspace', '2048').options.workspaceMiB).toBe(2048);
    // Agreeing with --memPoolSize is fine.
    expect(parse('--workspace=1024', '--memPoolSize=workspace:1G').options.workspaceMiB).toBe(1024);
  });

  it('inference-only flags are accepted, change nothing, and are listed once as given', () => {
    const r = parse(
      '--useCudaGraph',
      '--iterations=100',
      '--warmUp',
      '500',
      '--duration=10',
      '--noDataTransfers',
      '--separateProfileRun',
      '--dumpProfile',
      '--useCudaGraph',
      '--fp16',
    );
    expect(r.options).toEqual({ precision: ['fp16'] });
    expect(r.ignored).toEqual(['--useCudaGraph', '--iterations=100', '--warmUp=500', '--duration=10', '--noDataTransfers', '--separateProfileRun', '--dumpProfile']);
    expect(r.warnings).toEqual([]);
    // A spaced value is taken with its flag only when it is not itself a flag.
    expect(parse('--iterations', '--fp16').ignored).toEqual(['--iterations']);
    expect(parse('--iterations', '--fp16').options).toEqual({ precision: ['fp16'] });
    expect(ignoredFlagsNote(r.ignored)).toBe(
      'ignored (this builds only; --skipInference implied): --useCudaGraph --iterations=100 --warmUp=500 --duration=10 --noDataTransfers --separateProfileRun --dumpProfile',
    );
    expect(ignoredFlagsNote([])).toBeUndefined();
  });

  it('every inference-only flag of trtexec 10.16 and 11.1 is accepted', () => {
    for (const [flag, takesValue] of Object.entries(INFERENCE_ONLY_FLAGS)) {
      const r = parse(takesValue ? `${flag}=1` : flag);
      expect(r.ignored, flag).toEqual([takesValue ? `${flag}=1` : flag]);
      expect(r.options, flag).toEqual({});
    }
  });

  it('--plugins, --nvtxMode, --explicitBatch: read as their successors with the notes trtexec printed', () => {
    const r = parse('--plugins=/p/a.so', '--staticPlugins=/p/b.so', '--nvtxMode=verbose', '--explicitBatch');
    expect(r.options).toEqual({ staticPlugins: ['/p/b.so', '/p/a.so'], profilingVerbosity: 'detailed' });
    expect(r.warnings).toEqual([
      '--plugins flag has been deprecated, use --staticPlugins flag instead.',
      '--nvtxMode flag has been deprecated by --profilingVerbosity flag. (trtexec 10 and later no longer take --nvtxMode.)',
      expect.stringMatching(/^--explicitBatch flag has been deprecated and has no effect!/),
    ]);
    // --profilingVerbosity wins over --nvtxMode, as in trtexec 8.x.
    expect(parse('--nvtxMode=none', '--profilingVerbosity=detailed').options.profilingVerbosity).toBe('detailed');
  });

  it('--best is returned for the version to resolve, and is not offered as a supported spelling twice', () => {
    expect(parse('--best').best).toBe(true);
    expect(parse('--best').options).toEqual({});
    expect(parse('--fp16').best).toBe(false);
  });

  it("the issue's command: a 1024 MiB workspace, two flags ignored, a copy that parses back to the same build without notes", () => {
    const first = parseTrtexecArgs(['--onnx=m.onnx', '--saveEngine=e.engine', '--workspace=1024', '--useCudaGraph', '--iterations=100']);
    expect(first.options).toEqual({ workspaceMiB: 1024 });
    expect(first.ignored).toEqual(['--useCudaGraph', '--iterations=100']);
    const copied = trtexecArgs({ modelPath: first.modelPath, enginePath: first.enginePath, options: first.options, trtVersion: '10.16.1' });
    expect(copied).toEqual(['--onnx=m.onnx', '--saveEngine=e.engine', '--memPoolSize=workspace:1024M', '--skipInference']);
    const again = parseTrtexecArgs(copied);
    expect(again.options).toEqual(first.options);
    expect(again.warnings).toEqual([]);
    expect(again.ignored).toEqual([]);
  });

  it.each([
    ['10.16.1', '9.0'],
    ['10.3.0', '8.6'],
    ['10.16.1', '7.5'],
    ['10.16.1', '10.3'],
    ['10.12.0', '10.3'],
    ['10.16.1', undefined],
  ])('--best on TensorRT %s, compute capability %s: parse → resolve → copy → parse gives the same build', (version, cc) => {
    const first = parse('--best');
    const options = { ...first.options, precision: bestPrecisions(version, cc, false).precision };
    const copied = trtexecArgs({ modelPath: 'm.onnx', enginePath: 'm.engine', options, trtVersion: version });
    const again = parseTrtexecArgs(copied);
    expect(again.options).toEqual(options);
    expect(again.best).toBe(false);
  });
});

describe('round trip of the spellings trtexec also takes: parse → copy → parse gives the same build', () => {
  it.each([
    [['--workspace=1024']],
    [['--workspace=1024', '--useCudaGraph', '--iterations=100', '--warmUp=200', '--avgRuns', '10']],
    [['--plugins=/p/a.so', '--nvtxMode=default', '--explicitBatch']],
    [['--memPoolSize=workspace:512m,tacticSharedMem:0.25m']],
    [['--hardwareCompatibilityLevel=Ampere+']],
    [['--hardwareCompatibilityLevel=SameComputeCapability']],
    [['--profilingVerbosity=verbose']],
    [['--profilingVerbosity=default']],
    [['--minShapes=x:1x3', '--maxShapes=x:8x3']],
    [['--maxShapes=x:8x3']],
    [['--buildOnly', '--verbose', '--optShapes=x:2x3']],
  ])('%j', (args) => {
    const first = parse(...args);
    const copied = trtexecArgs({ modelPath: 'm.onnx', enginePath: 'm.engine', options: first.options, trtVersion: '10.16.1' });
    const again = parseTrtexecArgs(copied);
    expect(again.options).toEqual(first.options);
    // The copy uses the current spellings: nothing in it draws a warning.
    expect(again.warnings).toEqual([]);
  });
});

// ───────────────────────── round trip over many combinations ─────────────────────────

/** A small deterministic generator, so failures reproduce. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
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
  if (maybe(0.3)) o.verboseLog = true;
  if (maybe(0.3)) {
    o.versionCompatible = true;
    if (maybe()) o.excludeLeanRuntime = true;
  }
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
