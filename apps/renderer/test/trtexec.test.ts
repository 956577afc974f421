import { describe, expect, it } from 'vitest';
import { defaultEnginePath, shellQuote, trtexecCommand } from '../lib/trtexec.js';

describe('trtexecCommand', () => {
  it('maps every form option to the trtexec flag users know', () => {
    const cmd = trtexecCommand({
      modelPath: 'models/resnet.onnx',
      options: {
        optLevel: 5,
        workspaceMiB: 2048,
        timingCache: '/caches/rn.cache',
        precision: ['fp16', 'int8'],
        shapes: {
          input: { min: [1, 3, 224, 224], opt: [4, 3, 224, 224], max: [8, 3, 224, 224] },
          mask: { min: [1, 16], opt: [1, 64], max: [1, 128] },
        },
      },
    });
    expect(cmd).toBe(
      'trtexec --onnx=models/resnet.onnx --saveEngine=models/resnet.engine --builderOptimizationLevel=5 ' +
        '--memPoolSize=workspace:2048M ' +
        '--minShapes=input:1x3x224x224,mask:1x16 --optShapes=input:4x3x224x224,mask:1x64 --maxShapes=input:8x3x224x224,mask:1x128 ' +
        '--timingCacheFile=/caches/rn.cache --fp16 --int8 --skipInference',
    );
  });

  it('uses --stronglyTyped instead of precision flags', () => {
    const cmd = trtexecCommand({ modelPath: 'm.onnx', options: { stronglyTyped: true, precision: ['fp16'] } });
    expect(cmd).toBe('trtexec --onnx=m.onnx --saveEngine=m.engine --stronglyTyped --skipInference');
  });

  it('leaves out simulator-only options and quotes paths with spaces for the shell', () => {
    const cmd = trtexecCommand({
      modelPath: "/home/me/my model's.onnx",
      enginePath: '/tmp/out.engine',
      options: { simDuration: 5, simFault: 'crash', simSeed: 3, backend: 'simulated' },
    });
    expect(cmd).toBe(`trtexec '--onnx=/home/me/my model'\\''s.onnx' --saveEngine=/tmp/out.engine --skipInference`);
  });

  it('follows the TensorRT version of the backend in use', () => {
    const options = { precision: ['fp16' as const], stronglyTyped: false, buildRoute: 'fast', device: 1 };
    expect(trtexecCommand({ modelPath: 'm.onnx', options, trtVersion: '10.16.1' })).toBe('trtexec --onnx=m.onnx --saveEngine=m.engine --fp16 --device=1 --skipInference');
    expect(trtexecCommand({ modelPath: 'm.onnx', options: { ...options, stronglyTyped: true }, trtVersion: '11.1.0' })).toBe(
      'trtexec --onnx=m.onnx --saveEngine=m.engine --device=1 --setBuildRoute=fast --skipInference',
    );
  });

  it('names the engine after the model', () => {
    expect(defaultEnginePath('a/b.ONNX')).toBe('a/b.engine');
    expect(defaultEnginePath('a/model')).toBe('a/model.engine');
    expect(shellQuote('$(rm -rf /)')).toBe(`'$(rm -rf /)'`);
  });
});
