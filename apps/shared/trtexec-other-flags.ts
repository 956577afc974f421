// The trtexec flags that are not build options: what people paste from scripts written for
// inference runs and for older TensorRT releases. Read from trtexec's own option parser
// (samples/common/sampleOptions.cpp of NVIDIA/TensorRT, release/8.6, 10.x and 11.1):
// - inference and reporting flags that only matter once an engine runs: accepted and ignored,
//   since `trt-build-studio trtexec` only builds (--skipInference is implied); the CLI lists them
//   once. Flags trtexec still honours with --skipInference (--dumpLayerInfo, --exportLayerInfo,
//   --dumpOptimizationProfile, --dumpRefit, --timeRefit, --refitFromOnnx) are NOT here: ignoring
//   them would drop something the user asked of the build, so they stay refused as unsupported.
// - flags trtexec renamed or removed: read as their successor where it means the same build
//   (--workspace, --plugins, --nvtxMode, --explicitBatch), refused naming the successor otherwise;
// - --best, whose meaning depends on the TensorRT version and the GPU (bestPrecisions).
import type { Precision } from './protocol.js';
import { PRECISION_REMOVED_ADVICE, trtCapabilities, type TrtCapabilities } from './trt-capabilities.js';
import { UsageError } from './usage-error.js';

/**
 * Inference-only flags (InferenceOptions and ReportingOptions of trtexec 10.x and 11.1, less
 * those it honours after a build-only run) → whether the flag takes a value (`--iterations=100`
 * or `--iterations 100`).
 */
export const INFERENCE_ONLY_FLAGS: Readonly<Record<string, boolean>> = {
  '--iterations': true,
  '--duration': true,
  '--warmUp': true,
  '--sleepTime': true,
  '--idleTime': true,
  '--infStreams': true,
  '--streams': true, // trtexec's deprecated spelling of --infStreams
  '--batch': true, // implicit-batch inference, TensorRT 8.x
  '--persistentCacheRatio': true,
  '--loadInputs': true,
  '--loadRefOutputs': true, // 11.1
  '--accuracyAlgorithm': true, // 11.1
  '--atol': true, // 11.1
  '--rtol': true, // 11.1
  '--accuracyThreshold': true, // 11.1
  '--useProfile': true,
  '--allocationStrategy': true,
  '--weightStreamingBudget': true,
  '--saveDebugTensors': true,
  '--saveAllDebugTensors': true,
  '--avgRuns': true,
  '--percentile': true,
  '--exportTimes': true,
  '--exportOutput': true,
  '--exportProfile': true,
  '--exposeDMA': false,
  '--noDataTransfers': false,
  '--includeDataTransfers': false, // 11.1
  '--useManagedMemory': false,
  '--useSpinWait': false,
  '--noSpinWait': false, // 11.1
  '--threads': false,
  '--useCudaGraph': false,
  '--noCudaGraph': false, // 11.1
  '--separateProfileRun': false,
  '--timeDeserialize': false,
  '--dumpOutput': false,
  '--dumpRawBindingsToFile': false,
  '--dumpProfile': false,
};

/** The one line that lists what was ignored (the CLI prints it once, on stderr). */
export function ignoredFlagsNote(ignored: readonly string[]): string | undefined {
  return ignored.length ? `ignored (this builds only; --skipInference implied): ${ignored.join(' ')}` : undefined;
}

/**
 * Flags trtexec renamed or removed whose successor means something this command cannot read
 * for them: refused with what to use instead (trtexec's own advice where it gave one).
 */
export const RETIRED_FLAGS: Readonly<Record<string, { value: boolean; instead: string }>> = {
  '--maxBatch': {
    value: true,
    instead: 'implicit batch was removed in TensorRT 10: the batch is part of the input shapes, give it in --minShapes/--optShapes/--maxShapes',
  },
  '--heuristic': { value: false, instead: 'trtexec deprecated it: use --builderOptimizationLevel=<N> instead (N <= 2 enables heuristic)' },
  '--weightless': { value: false, instead: 'trtexec deprecated it for --stripWeights, which this command does not take (it builds engines with their weights)' },
  '--uff': { value: true, instead: 'the UFF parser was removed in TensorRT 10: export the model to ONNX and give --onnx=<model.onnx>' },
  '--uffInput': { value: true, instead: 'the UFF parser was removed in TensorRT 10: export the model to ONNX and give --onnx=<model.onnx>' },
  '--uffNHWC': { value: false, instead: 'the UFF parser was removed in TensorRT 10: export the model to ONNX and give --onnx=<model.onnx>' },
  '--deploy': { value: true, instead: 'the Caffe parser was removed in TensorRT 10: export the model to ONNX and give --onnx=<model.onnx>' },
  '--model': { value: true, instead: 'the Caffe parser was removed in TensorRT 10: export the model to ONNX and give --onnx=<model.onnx>' },
  '--output': { value: true, instead: 'Caffe and UFF output names (removed in TensorRT 10): an ONNX model names its own outputs, give --onnx=<model.onnx>' },
  '--calib': {
    value: true,
    instead:
      'INT8 calibration caches are not read here (implicit quantization is deprecated in TensorRT 10 and removed in 11): quantize the model with Q/DQ nodes (e.g. NVIDIA Model Optimizer)',
  },
};

/** Accepted as their successor, with trtexec's own warning (and when it stopped taking them). */
export const RENAMED_FLAG_WARNINGS = {
  workspace: (mib: number) =>
    `--workspace flag has been deprecated by --memPoolSize flag. (trtexec 10 and later no longer take --workspace.) Read as --memPoolSize=workspace:${mib}M.`,
  plugins: '--plugins flag has been deprecated, use --staticPlugins flag instead.',
  nvtxMode: '--nvtxMode flag has been deprecated by --profilingVerbosity flag. (trtexec 10 and later no longer take --nvtxMode.)',
  explicitBatch: '--explicitBatch flag has been deprecated and has no effect! (Every network is explicit batch since TensorRT 10; trtexec 10 and later no longer take it.)',
  explicitPrecision: '--explicitPrecision flag has been deprecated and has no effect! (trtexec 10 and later no longer take it.)',
} as const;

/** What --best turns on, and the one warning that says so. */
export interface BestPrecisions {
  precision: Precision[];
  warning: string;
}

/** "9.0" → 0x0900, as samplesCommon::getSmVersion(); undefined when unknown. */
function smVersion(computeCapability: string | undefined): number | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(computeCapability ?? '');
  return m ? (Number(m[1]) << 8) + Number(m[2]) : undefined;
}

/**
 * --best as trtexec of that TensorRT version reads it (BuildOptions::parse):
 * - 10.x: FP16 and INT8, and BF16 on compute capability 8.0 or newer; from 10.13 not INT8 on
 *   compute capability 10.3 (caps.bestWithoutInt8OnCc103). With the GPU unknown (the simulated
 *   backend) it reads as on an Ampere-or-newer GPU (FP16, INT8, BF16), and the warning says so.
 * - 11.x (caps.stronglyTypedImplied): trtexec has no --best. Networks are strongly typed, so there
 *   is nothing for it to enable: refused with what to do instead.
 * With --stronglyTyped it is refused in trtexec's words. Refusals are UsageErrors (the CLI exits
 * 2). `caps`: what the backend reports for that version (backendCapabilities), else read from the
 * version.
 */
export function bestPrecisions(
  trtVersion: string,
  computeCapability: string | undefined,
  stronglyTyped: boolean,
  caps: TrtCapabilities = trtCapabilities(trtVersion),
): BestPrecisions {
  const { major, minor } = caps;
  if (caps.stronglyTypedImplied) {
    throw new UsageError(
      `--best: TensorRT ${trtVersion} has no --best (trtexec 11 removed it with the precision flags). Networks are strongly typed: each layer runs in the ` +
        `precision its tensors' types and the model's Q/DQ nodes give it, so there is nothing for --best to enable. ${PRECISION_REMOVED_ADVICE}, then build without --best.`,
    );
  }
  if (stronglyTyped) {
    throw new UsageError('--best and --stronglyTyped cannot be both set. --best enables implicit precisions, while --stronglyTyped enforces explicit precisions.');
  }
  const sm = smVersion(computeCapability);
  // In the order precisions are listed everywhere else (fp16, bf16, int8), so a copy reads back the same.
  const precision: Precision[] = ['fp16'];
  const noInt8 = sm === 0x0a03 && caps.bestWithoutInt8OnCc103;
  if (sm === undefined || sm >= 0x0800) precision.push('bf16');
  if (!noInt8) precision.push('int8');
  const on = sm === undefined ? 'with the GPU unknown, read as on compute capability 8.0 or newer' : `on compute capability ${computeCapability}`;
  const words = precision.map((p) => p.toUpperCase()).join(', ');
  return {
    precision,
    warning:
      `--best enables ${words} (as trtexec ${major}.${minor} does ${on}; ${noInt8 ? 'no INT8 on compute capability 10.3' : sm !== undefined && sm < 0x0800 ? 'BF16 needs 8.0 or newer' : 'TensorRT picks the fastest per layer'}). ` +
      'Weakly-typed networks have been deprecated in TensorRT: a strongly typed model (cast or quantized offline) builds the same on TensorRT 11.',
  };
}

/**
 * Build flags of trtexec 10.16 and 11.1 this command does not carry into a build, each with why
 * (one line; the CLI exits 2 with `<flag>: <why>`). Everything else trtexec --help lists for a
 * build is read (the options table, trtexec.ts) or accepted with a note (INFERENCE_ONLY_FLAGS,
 * NOTED_FLAGS). apps/shared/test/trtexec-build-flags.test.ts walks both versions' lists.
 */
export const REFUSED_BUILD_FLAGS: Readonly<Record<string, string>> = {
  '--minShapesCalib': 'calibration shapes serve INT8 calibration, which this product does not run (quantize with Q/DQ nodes instead)',
  '--optShapesCalib': 'calibration shapes serve INT8 calibration, which this product does not run (quantize with Q/DQ nodes instead)',
  '--maxShapesCalib': 'calibration shapes serve INT8 calibration, which this product does not run (quantize with Q/DQ nodes instead)',
  '--calibProfile': 'calibration profiles serve INT8 calibration, which this product does not run (quantize with Q/DQ nodes instead)',
  '--profile': 'builds here have one optimization profile (from --minShapes/--optShapes/--maxShapes); several profiles are not supported',
  '--refit': 'refittable engines are not built here (the engine manifest identifies an engine by its weights)',
  '--stripWeights': 'weight-stripped engines are not built here: engines carry their weights',
  '--stripAllWeights': 'weight-stripped engines are not built here: engines carry their weights',
  '--refitFromOnnx': 'refitting an engine is not a build; this command builds engines with their weights',
  '--pluginInstanceNorm': "TensorRT's native InstanceNormalization is always used here (the plugin variant is not offered)",
  '--uint8AsymmetricQuantizationDLA': 'DLA standalone quantization is not supported here (only --useDLACore with GPU engines)',
  '--reportCapabilityDLA': 'DLA capability reports are not produced here (the build tree lists each layer with its device)',
  '--adjustForDLA': 'rewriting a network for DLA is not supported here; give --useDLACore and --allowGPUFallback',
  '--buildDLAStandalone': 'DLA standalone loadables are not built here; give --useDLACore (with --allowGPUFallback) for a GPU engine',
  '--layerDeviceTypes': 'per-layer device placement is not taken here; --useDLACore with --allowGPUFallback places what DLA can run',
  '--enablePluginOverride': 'overriding built-in ONNX ops with plugins of the same name is not supported here',
  '--leanDLLPath': 'a lean runtime library is used when an engine runs; this command only builds',
  '--directIO': 'kDIRECT_IO is deprecated in TensorRT 10 and not offered here; give --inputIOFormats/--outputIOFormats',
  '--decomposableAttentions': 'attention decomposition control is not offered here yet',
  '--safe': 'safety-certified engines need TensorRT safety, which this product does not drive',
  '--consistency': 'the safety consistency checker belongs to TensorRT safety, which this product does not drive',
  '--restricted': 'restricted (safety) builds need TensorRT safety, which this product does not drive',
  '--safetyPlugins': 'safety plugins belong to TensorRT safety, which this product does not drive',
  '--dumpKernelText': 'kernel text dumps are not produced here',
  '--loadEngine': 'this command builds from --onnx; loading an existing engine is for inference (see trt-build-studio inspect)',
  '--asyncFileReader': 'reads an engine for inference; this command builds from --onnx',
  '--getPlanVersionOnly': 'reads an engine file; this command builds (trt-build-studio check reports an engine manifest)',
  '--noBuilderCache': "the builder's timing cache is always on here; give --timingCacheFile to keep it in a file",
  '--errorOnTimingCacheMiss': 'trtexec also writes the cache back; here a pinned build does this without writing: trt-build-studio build --pinned-cache <file>',
  '--maxTactics': 'capping the number of tactics timed is not offered here (--builderOptimizationLevel trades build time instead)',
  '--runtimePlatform': 'engines are built for the platform they are built on here (no cross-platform engines)',
  '--tempdir': "TensorRT's temporary files go to the worker's default temporary directory here",
  '--tempfileControls': "TensorRT's temporary files go to the worker's default temporary directory here",
  '--allowWeightStreaming': 'weight-streaming engines are not built here',
  '--markDebug': 'debug tensors are for inference runs; this command only builds',
  '--markUnfusedTensorsAsDebugTensors': 'debug tensors are for inference runs; this command only builds',
  '--tilingOptimizationLevel': 'tiling optimization is not offered here yet',
  '--l2LimitForTiling': 'tiling optimization is not offered here yet',
  '--remoteAutoTuningConfig': 'remote auto-tuning is not supported here (builds run on this machine or a farm worker)',
  '--cpuOnly': 'CPU-only builds are not supported here; builds run on a GPU (or the simulated backend)',
  '--ignoreParsedPluginLibs': 'plugin libraries named in the model are not loaded here; give --staticPlugins/--dynamicPlugins',
  '--dumpOptimizationProfile': 'optimization profile dumps are not produced here (the build tree shows the shapes used)',
  '--dumpRefit': 'refittable engines are not built here, so there are no refittable layers to list',
  '--timeRefit': 'refittable engines are not built here, so there is no refit to time',
  '--tuneBuildRoutes': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--tuneBuildRouteFile': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--tuningSearch': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--tuningCacheFile': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--tuningTimeOut': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--saveAllEngines': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--dryRun': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--continue': 'build-route tuning runs many builds and times each with inference; this product builds one route: give it with --setBuildRoute',
  '--helpBuildRoute': 'prints the knob database and exits, so it goes alone: trt-build-studio trtexec --helpBuildRoute[=<knob>]',
};

/** Build flags accepted without effect, with why (printed once as a warning). */
export const NOTED_FLAGS: Readonly<Record<string, string>> = {
  '--monitorMemory': "--monitorMemory: the build's host and GPU memory are always watched here (heartbeats), so the flag adds nothing.",
};

/** `--flag: why` for a refused build flag, or undefined. */
export function refusedBuildFlag(flag: string): string | undefined {
  return Object.hasOwn(REFUSED_BUILD_FLAGS, flag) ? `${flag}: ${REFUSED_BUILD_FLAGS[flag]}` : undefined;
}
