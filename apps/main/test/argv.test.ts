import { describe, expect, it } from 'vitest';
import { modelPathFromArgv } from '../argv.js';

describe('model path from the command line', () => {
  it('skips the executable, the app folder in development, and switches', () => {
    expect(modelPathFromArgv(['/usr/bin/electron', '.', '--inspect=0', '--remote-debugging-port=0', 'models/m.onnx'], '/work', false)).toBe('/work/models/m.onnx');
    expect(modelPathFromArgv(['/opt/TRT Build Studio/trt-build-studio', '/data/Mödel 1.ONNX'], '/home/u', true)).toBe('/data/Mödel 1.ONNX');
  });

  it('does not mistake the app folder or other arguments for a model', () => {
    expect(modelPathFromArgv(['/usr/bin/electron', '.'], '/work', false)).toBeNull();
    expect(modelPathFromArgv(['/usr/bin/electron', 'app.onnx'], '/work', false)).toBeNull();
    expect(modelPathFromArgv(['/opt/app', '--no-sandbox', 'readme.txt'], '/work', true)).toBeNull();
    expect(modelPathFromArgv(['/opt/app', '--open=/x.onnx'], '/work', true)).toBeNull();
  });

  it('resolves a second instance\'s path against that instance\'s working directory', () => {
    expect(modelPathFromArgv(['/opt/app', '../m.onnx'], '/home/u/proj', true)).toBe('/home/u/m.onnx');
  });
});
