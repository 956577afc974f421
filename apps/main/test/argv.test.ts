import { describe, expect, it } from 'vitest';
import { modelPathFromArgv } from '../argv.js';

describe('model path from the command line', () => {
  it('skips the executable, the app folder in development, and switches', () => {
    expect(modelPathFromArgv(['/usr/bin/electron', '.', '--inspect=0', '--remote-debugging-port=0', 'models/m.onnx'], '/work', false)).toBe('/work/models/m.onnx');
    expect(modelPathFromArgv(['/opt/TRT Build Studio/trt-build-studio-app', '/data/Mödel 1.ONNX'], '/home/u', true)).toBe('/data/Mödel 1.ONNX');
  });

  it('does not mistake the app folder or other arguments for a model', () => {
    expect(modelPathFromArgv(['/usr/bin/electron', '.'], '/work', false)).toBeNull();
    expect(modelPathFromArgv(['/usr/bin/electron', 'app.onnx'], '/work', false)).toBeNull();
    expect(modelPathFromArgv(['/opt/app', '--no-sandbox', 'readme.txt'], '/work', true)).toBeNull();
    expect(modelPathFromArgv(['/opt/app', '--open=/x.onnx'], '/work', true)).toBeNull();
  });

  it("resolves a second instance's path against that instance's working directory", () => {
    expect(modelPathFromArgv(['/opt/app', '../m.onnx'], '/home/u/proj', true)).toBe('/home/u/m.onnx');
  });
});

describe('file URLs from the file manager (.desktop Exec=… %U)', () => {
  const packaged = (arg: string, cwd = '/home/u') => modelPathFromArgv(['/opt/TRT Build Studio/trt-build-studio-app', arg], cwd, true);

  it('decodes a file URL to the path it names (spaces, %-escapes, unicode)', () => {
    expect(packaged('file:///home/u/My%20Model.onnx')).toBe('/home/u/My Model.onnx');
    expect(packaged('file:///data/M%C3%B6del%201.ONNX')).toBe('/data/Mödel 1.ONNX');
    expect(packaged('file:///data/%E6%A8%A1%E5%9E%8B.onnx')).toBe('/data/模型.onnx');
    expect(packaged('file://localhost/srv/a%23b.onnx')).toBe('/srv/a#b.onnx');
  });

  it('decodes in development too (argv[1] is the app folder)', () => {
    expect(modelPathFromArgv(['/usr/bin/electron', '.', 'file:///tmp/x%20y.onnx'], '/work', false)).toBe('/tmp/x y.onnx');
  });

  it('keeps plain paths as paths: a literal %20 in a file name is not decoded, relative paths resolve against cwd', () => {
    expect(packaged('/home/u/My%20Model.onnx')).toBe('/home/u/My%20Model.onnx');
    expect(packaged('my model.onnx', '/home/u/models')).toBe('/home/u/models/my model.onnx');
    expect(packaged('./sub/../m.onnx', '/home/u')).toBe('/home/u/m.onnx');
  });

  it('refuses URLs that are not local files, and skips to the next argument', () => {
    expect(packaged('https://example.com/m.onnx')).toBeNull();
    expect(packaged('sftp://host/home/u/m.onnx')).toBeNull();
    expect(packaged('file://otherhost/share/m.onnx')).toBeNull();
    expect(packaged('file:///home/u/notes.txt')).toBeNull();
    expect(modelPathFromArgv(['/opt/app', 'https://example.com/a.onnx', 'file:///b%20c.onnx'], '/', true)).toBe('/b c.onnx');
  });

  it("decodes the argv a second instance forwards the same way, against that instance's cwd", () => {
    // 'second-instance' hands over the other process's argv and cwd; main.ts passes both here.
    expect(modelPathFromArgv(['/opt/app', '--no-sandbox', 'file:///home/v/Second%20One.onnx'], '/home/v', true)).toBe('/home/v/Second One.onnx');
  });
});
