// Every build flag `trtexec --help` lists for TensorRT 10.16 and 11.1 (fixtures/trtexec-build-flags.json,
// names gathered from NVIDIA's sampleOptions.cpp of each release) through `trt-build-studio trtexec`:
// each is either carried into the build (its options survive a copied command and read back the
// same) or accepted with a stated effect (the model, the engine path, --skipInference, inference-
// only flags listed as ignored, layer-information exports done after the build), or refused with
// a one-line reason of its own that names it. Nothing falls through to the generic "unknown flag".
import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { trtCapabilities, versionProblems } from '../trt-capabilities.js';
import { formatTrtexecCommand, parseTrtexecArgs, trtexecArgs } from '../trtexec.js';
import { bestPrecisions } from '../trtexec-other-flags.js';
import { UsageError } from '../usage-error.js';

const LISTS = JSON.parse(fs.readFileSync(new URL('./fixtures/trtexec-build-flags.json', import.meta.url), 'utf8')) as Record<string, string[]>;
const VERSIONS = ['10.16', '11.1'] as const;

/** A value for each flag that takes one (a refused flag is refused before its value is read). */
const VALUE: Record<string, string[]> = {
  '--minShapes': ['--minShapes=x:1x3x8x8', '--optShapes=x:2x3x8x8', '--maxShapes=x:4x3x8x8'],
  '--optShapes': ['--optShapes=x:2x3x8x8'],
  '--maxShapes': ['--minShapes=x:1x3x8x8', '--maxShapes=x:4x3x8x8'],
  '--inputIOFormats': ['--inputIOFormats=fp16:chw,int8:chw4+hwc8'],
  '--outputIOFormats': ['--outputIOFormats=fp16:hwc8'],
  '--memPoolSize': ['--memPoolSize=workspace:1024MiB,tacticSharedMem:48K'],
  '--profilingVerbosity': ['--profilingVerbosity=detailed'],
  '--avgTiming': ['--avgTiming=4'],
  '--sparsity': ['--sparsity=enable'],
  '--precisionConstraints': ['--precisionConstraints=obey'],
  '--layerPrecisions': ['--layerPrecisions=conv1:fp16,*:fp32'],
  '--layerOutputTypes': ['--layerOutputTypes=split:fp16+fp32'],
  '--tacticSources': ['--tacticSources=-CUBLAS,+CUDNN'],
  '--timingCacheFile': ['--timingCacheFile=m.cache'],
  '--preview': ['--preview=+aliasedPluginIO1003'],
  '--builderOptimizationLevel': ['--builderOptimizationLevel=4'],
  '--hardwareCompatibilityLevel': ['--hardwareCompatibilityLevel=ampere+'],
  '--maxAuxStreams': ['--maxAuxStreams=2'],
  '--device': ['--device=1'],
  '--staticPlugins': ['--staticPlugins=/p/a.so'],
  '--dynamicPlugins': ['--dynamicPlugins=/p/b.so'],
  '--setPluginsToSerialize': ['--setPluginsToSerialize=/p/c.so'],
  '--useDLACore': ['--useDLACore=0'],
  '--setBuildRoute': ['--setBuildRoute=-conv_use_long_w=off'],
};

/** Flags read into something other than options: the model, the engine, and what trtexec does besides building. */
const ACCEPTED_ELSEWHERE: Record<string, (r: ReturnType<typeof parseTrtexecArgs>) => void> = {
  '--onnx': (r) => expect(r.modelPath).toBe('m.onnx'),
  '--saveEngine': (r) => expect(r.enginePath).toBe('out.engine'),
  '--skipInference': (r) => expect(r.options).toEqual({}),
  '--best': (r) => expect(r.best).toBe(true),
  '--dumpLayerInfo': (r) => expect(r.layerInfo.dump).toBe(true),
  '--exportLayerInfo': (r) => expect(r.layerInfo.exportPath).toBe('l.json'),
  '--exportProfile': (r) => expect(r.ignored).toEqual(['--exportProfile=p.json']),
  '--monitorMemory': (r) => expect(r.warnings).toEqual([expect.stringMatching(/^--monitorMemory: /)]),
};
const ELSEWHERE_ARGS: Record<string, string[]> = {
  '--saveEngine': ['--saveEngine=out.engine'],
  '--exportLayerInfo': ['--exportLayerInfo=l.json'],
  '--exportProfile': ['--exportProfile=p.json'],
};

function argsFor(flag: string): string[] {
  return VALUE[flag] ?? ELSEWHERE_ARGS[flag] ?? (flag === '--onnx' ? [] : [flag]);
}

describe.each(VERSIONS)("trtexec %s's build flags", (version) => {
  const flags = LISTS[version];

  it('the list is the one gathered from that release (sanity: it has the flags issue 37 names)', () => {
    expect(flags.length).toBeGreaterThan(60);
    for (const f of [
      '--inputIOFormats',
      '--outputIOFormats',
      '--sparsity',
      '--tacticSources',
      '--avgTiming',
      '--useDLACore',
      '--allowGPUFallback',
      '--noCompilationCache',
      '--preview',
    ]) {
      expect(flags).toContain(f);
    }
    expect(flags.includes('--precisionConstraints')).toBe(version === '10.16');
  });

  it.each(flags)('%s is carried into the build or refused in one line of its own', (flag) => {
    const argv = ['--onnx=m.onnx', ...argsFor(flag)];
    let parsed: ReturnType<typeof parseTrtexecArgs> | undefined;
    let error: unknown;
    try {
      parsed = parseTrtexecArgs(argv);
    } catch (e) {
      error = e;
    }
    if (error !== undefined) {
      expect(error).toBeInstanceOf(UsageError);
      const message = (error as Error).message;
      expect(message.startsWith(`${flag}: `) || message.startsWith(`${flag}=`), message).toBe(true);
      expect(message).not.toContain('\n');
      expect(message.length, message).toBeLessThan(200);
      expect(message).not.toMatch(/not a trtexec build flag this command knows/);
      return;
    }
    if (Object.hasOwn(ACCEPTED_ELSEWHERE, flag)) {
      ACCEPTED_ELSEWHERE[flag](parsed!);
      return;
    }
    // Carried: the options changed, and a copied command (for this version) reads back the same.
    const { options } = parsed!;
    expect(Object.keys(options).length, `${flag} set no option`).toBeGreaterThan(0);
    // A copy for 11.1 leaves out --stronglyTyped (implied), so it reads back without it.
    const expected = version === '11.1' && flag === '--stronglyTyped' ? {} : options;
    const copy = trtexecArgs({ modelPath: 'm.onnx', options, trtVersion: `${version}.0` });
    expect(parseTrtexecArgs(copy).options).toEqual(expected);
    expect(formatTrtexecCommand({ modelPath: 'm.onnx', options, trtVersion: `${version}.0` })).toContain(flag === '--memPoolSize' ? '--memPoolSize=workspace:1024M' : '');
  });

  it('flags carried but not for this version are refused by the version check with why', () => {
    const caps = trtCapabilities(`${version}.0`);
    const o = { precisionConstraints: 'obey' as const, layerPrecisions: '*:fp16' };
    const problems = versionProblems(o, caps);
    if (version === '11.1') {
      expect(problems).toEqual([
        expect.stringMatching(/^precisionConstraints, layerPrecisions: TensorRT 11\.1\.0 has no per-layer precision constraints: networks are strongly typed/),
      ]);
      expect(() => bestPrecisions('11.1.0', undefined, false)).toThrow(UsageError);
    } else {
      expect(problems).toEqual([]);
      expect(versionProblems({ ...o, stronglyTyped: true }, caps)).toEqual([expect.stringMatching(/^stronglyTyped cannot be combined with precisionConstraints, layerPrecisions/)]);
    }
  });
});
