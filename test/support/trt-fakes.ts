// The addon with its TensorRT adapters and the fake TensorRT libraries of one major, as a CMake
// build folder holds them when it was configured with that major's headers (TENSORRT_ROOT; see
// native/trt.cmake and native/test/trt/tests.cmake). For tests that run the whole product (CLI,
// service, worker, addon, adapter) on the tensorrt backend against the scripted fakes
// (native/test/trt/fake_full_nvinfer.cc): our own code, never NVIDIA's libraries, so these tests
// prove the product's wiring, not what a real TensorRT does.
//
// The folder is TBS_TRT_BUILD_DIR when set, else build/native (what `npm run build:native` fills;
// with TENSORRT_ROOT set it has the adapters). Without TensorRT headers there is no such folder:
// `trtFakeBuild` then says why, and the tests that need it are skipped with that reason.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './cli.js';

export interface TrtFakeBuild {
  /** The build folder. */
  dir: string;
  /** Environment for a CLI or service whose workers must use this addon and these fakes. */
  env: Record<string, string>;
  /** The fake libnvinfer file (its real path, as the route cache keys it). */
  nvinfer: string;
}

/** The build folder's TensorRT adapter of `major` and its full fakes, or the reason there is none. */
export function trtFakeBuild(major: 10 | 11): TrtFakeBuild | { missing: string } {
  const dir = path.resolve(REPO_ROOT, process.env.TBS_TRT_BUILD_DIR ?? path.join('build', 'native'));
  const addon = path.join(dir, 'Release', 'trt_build_studio.node');
  const adapter = path.join(dir, 'Release', `libtbs_trt${major}.so`);
  const libDir = path.join(dir, `trt${major}-fake`, 'full-current');
  const nvinfer = path.join(libDir, `libnvinfer.so.${major}`);
  const cudaDriver = path.join(dir, 'gpu-fakes', 'libcuda.so.1');
  for (const [file, what] of [
    [addon, 'the addon'],
    [adapter, `the TensorRT ${major} adapter (configure with TENSORRT_ROOT naming ${major}.x headers)`],
    [nvinfer, `the fake libnvinfer of TensorRT ${major}`],
    [path.join(libDir, `libnvonnxparser.so.${major}`), `the fake ONNX parser of TensorRT ${major}`],
    [cudaDriver, 'the fake CUDA driver'],
    [path.join(dir, 'gpu-fakes', 'libnvidia-ml.so.1'), 'the fake NVML'],
  ] as const) {
    if (!fs.existsSync(file)) return { missing: `${what} is not built (${path.relative(REPO_ROOT, file)}); set TBS_TRT_BUILD_DIR to a build folder with it` };
  }
  return {
    dir,
    nvinfer: fs.realpathSync(nvinfer),
    env: {
      TBS_ADDON_PATH: addon,
      TBS_TRT_ADAPTER_DIR: path.dirname(adapter),
      TBS_TRT_LIB_DIR: libDir,
      TBS_CUDA_DRIVER_LIB: cudaDriver,
      // The fake NVML of the same folder (native/test/fake_nvml.cc): the driver version.
      TBS_NVML_LIB: path.join(dir, 'gpu-fakes', 'libnvidia-ml.so.1'),
      // Nothing of a developer's own install may leak in.
      TBS_NVINFER_LIB: '',
      TBS_NVONNXPARSER_LIB: '',
      TBS_NVINFER_PLUGIN_LIB: '',
      TBS_CUDART_LIB: '',
      FAKE_CUDA_DRIVER_VERSION: '',
      FAKE_TRT_BAD_CACHE: '',
    },
  };
}
