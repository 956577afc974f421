// `backends` as people read it: what was found for TensorRT (library, adapters, GPU) or why not.
import { describe, expect, it } from 'vitest';
import { describeBackend } from '../commands/backends.js';

describe('describeBackend', () => {
  it('shows the library, the adapters of this build, the adapter in use, the GPU, plugins and build route knobs (not their JSON)', () => {
    const text = describeBackend({
      name: 'tensorrt',
      available: true,
      version: '11.1.0',
      library: { path: '/opt/trt/lib/libnvinfer.so.11', version: '11.1.0' },
      parser: { path: '/opt/trt/lib/libnvonnxparser.so.11', version: '100' },
      adapters: [
        { major: 10, headerVersion: '10.3.0' },
        { major: 11, headerVersion: '11.1.0' },
      ],
      adapter: { major: 11, headerVersion: '11.1.0', path: '/app/build/trt_adapter_11.so' },
      preloaded: [{ path: '/opt/trt/lib/libcudart.so.12', version: '12.8' }],
      gpu: { name: 'NVIDIA L4', computeCapability: '8.9', device: 0 },
      buildRoutes: ['-conv_use_long_w=[on|off]', '-kgen:codegen:cuda_tile=[0|1|2|3]'],
      plugins: { path: '/opt/trt/lib/libnvinfer_plugin.so.11', version: '11.1.0', creators: 63 },
      detail: { buildRoutesJson: '{"tuner_options":[]}', note: 'n' },
    });
    expect(text.split('\n')).toEqual([
      'tensorrt   available  11.1.0',
      '           library: /opt/trt/lib/libnvinfer.so.11 (TensorRT 11.1.0)',
      '           ONNX parser: /opt/trt/lib/libnvonnxparser.so.11 (100)',
      '           adapters in this build: 10.x (headers 10.3.0), 11.x (headers 11.1.0)',
      '           adapter in use: 11.x (headers 11.1.0) /app/build/trt_adapter_11.so',
      '           preloaded: /opt/trt/lib/libcudart.so.12 (12.8)',
      '           GPU 0: NVIDIA L4, compute capability 8.9',
      '           plugins: /opt/trt/lib/libnvinfer_plugin.so.11 (11.1.0), 63 plugin creators registered',
      '           build route knobs: -conv_use_long_w=[on|off] -kgen:codegen:cuda_tile=[0|1|2|3]  (a route picks one value each; trtexec --helpBuildRoute)',
      '           note: n',
      '',
    ]);
  });

  it('shows the CUDA driver and, when it is older than TensorRT needs, says so', () => {
    const problem =
      'the CUDA driver is older than the library needs: the installed NVIDIA driver supports CUDA 11.8, and the CUDA runtime /opt/trt/lib/libcudart.so.12 needs CUDA 12.4 (a CUDA 12.x driver at least); update the NVIDIA driver, or use the TensorRT build for CUDA 11';
    const text = describeBackend({
      name: 'tensorrt',
      available: false,
      reason: problem,
      cudaDriver: { path: 'libcuda.so.1', version: '11.8', problem },
    });
    const lines = text.split('\n');
    expect(lines[0]).toBe(`tensorrt   unavailable: ${problem}`);
    expect(lines).toContain('           CUDA driver: libcuda.so.1 (supports CUDA 11.8)');
    expect(lines).toContain(`             ${problem}`);
    expect(describeBackend({ name: 'tensorrt', available: true, cudaDriver: { path: 'libcuda.so.1', version: '13.0' } })).toContain(
      'CUDA driver: libcuda.so.1 (supports CUDA 13.0)\n',
    );
  });

  it('says why TensorRT is unavailable, and what this build could have driven', () => {
    const text = describeBackend({
      name: 'tensorrt',
      available: false,
      reason: 'libnvinfer.so.11 is TensorRT 11.1.0, but this build has adapters for 10.x only',
      library: { path: '/usr/lib/libnvinfer.so.11', version: '11.1.0' },
      adapters: [{ major: 10, headerVersion: '10.16.1' }],
    });
    expect(text).toContain('tensorrt   unavailable: libnvinfer.so.11 is TensorRT 11.1.0, but this build has adapters for 10.x only');
    expect(text).toContain('adapters in this build: 10.x (headers 10.16.1)');
    expect(text).toContain('adapter in use: none');
    expect(describeBackend({ name: 'tensorrt', available: false, reason: 'r', adapters: [] })).toContain('adapters in this build: none (built without TensorRT headers)');
  });

  it('says which TensorRT version the simulator imitates', () => {
    expect(describeBackend({ name: 'simulated', available: true, version: 'sim-1', emulates: '11.1.0' })).toMatch(
      /^simulated {2}available {2}sim-1 {2}\(stand-in .*\)\n {11}imitates TensorRT 11\.1\.0/,
    );
  });
});
