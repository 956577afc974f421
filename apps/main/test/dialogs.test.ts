import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const dialog = {
  showOpenDialog: vi.fn(),
  showSaveDialog: vi.fn(),
};
vi.mock('electron', () => ({ dialog }));

const { createDialogs, StubAnswers } = await import('../dialogs.js');

beforeEach(() => {
  dialog.showOpenDialog.mockReset();
  dialog.showSaveDialog.mockReset();
});

describe('native dialogs', () => {
  it('returns null when the user cancels, the path otherwise', async () => {
    const d = createDialogs({});
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    expect(await d.chooseModel(null)).toBeNull();
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/m/a.onnx'] });
    expect(await d.chooseModel(null)).toBe('/m/a.onnx');
    dialog.showSaveDialog.mockResolvedValueOnce({ canceled: true, filePath: '' });
    expect(await d.chooseEngineDestination(null, '/docs/b1.engine')).toBeNull();
    dialog.showSaveDialog.mockResolvedValueOnce({ canceled: false, filePath: '/docs/out.engine' });
    expect(await d.chooseEngineDestination(null, '/docs/b1.engine')).toBe('/docs/out.engine');
  });

  it('starts the open dialog in the folder it is given, and leaves it to the OS otherwise', async () => {
    const d = createDialogs({});
    dialog.showOpenDialog.mockResolvedValue({ canceled: true, filePaths: [] });
    await d.chooseModel(null, '/home/u/models');
    expect(dialog.showOpenDialog.mock.calls[0][0]).toMatchObject({ defaultPath: '/home/u/models' });
    await d.chooseModel(null);
    expect(dialog.showOpenDialog.mock.calls[1][0]).not.toHaveProperty('defaultPath');
  });

  it('picks the TensorRT location as a folder, starting at the current one; cancel is null', async () => {
    const d = createDialogs({});
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    expect(await d.chooseTrtLibDir(null, '/opt/TensorRT-10.16/lib')).toBeNull();
    expect(dialog.showOpenDialog.mock.calls[0][0]).toMatchObject({ defaultPath: '/opt/TensorRT-10.16/lib', properties: ['openDirectory'] });
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/opt/trt/lib/'] });
    expect(await d.chooseTrtLibDir(null)).toBe('/opt/trt/lib');
    expect(dialog.showOpenDialog.mock.calls[1][0]).not.toHaveProperty('defaultPath');
  });

  it('parents dialogs to the window when there is one, and offers ONNX files first', async () => {
    const d = createDialogs({});
    const win = { id: 1 };
    dialog.showOpenDialog.mockResolvedValue({ canceled: true, filePaths: [] });
    await d.chooseModel(win as never);
    expect(dialog.showOpenDialog.mock.calls[0][0]).toBe(win);
    expect(dialog.showOpenDialog.mock.calls[0][1].filters[0]).toEqual({ name: 'ONNX models', extensions: ['onnx'] });
    dialog.showSaveDialog.mockResolvedValue({ canceled: true });
    await d.chooseEngineDestination(win as never, '/docs/x.engine');
    expect(dialog.showSaveDialog.mock.calls[0][1]).toMatchObject({ defaultPath: '/docs/x.engine', properties: expect.arrayContaining(['showOverwriteConfirmation']) });
  });

  it('answers from TBS_E2E_* in order, repeating the last, with "cancel" as a cancel', async () => {
    const d = createDialogs({
      TBS_E2E_OPEN: ['/m/a.onnx', '/m/b.onnx'].join(path.delimiter),
      TBS_E2E_SAVE: ['cancel', '/out/e.engine'].join(path.delimiter),
    });
    expect(await d.chooseModel(null)).toBe('/m/a.onnx');
    expect(await d.chooseModel(null)).toBe('/m/b.onnx');
    expect(await d.chooseModel(null)).toBe('/m/b.onnx');
    expect(await d.chooseEngineDestination(null, '/x')).toBeNull();
    expect(await d.chooseEngineDestination(null, '/x')).toBe('/out/e.engine');
    // Not stubbed: the real dialog.
    dialog.showSaveDialog.mockResolvedValueOnce({ canceled: false, filePath: '/real/timing.cache' });
    expect(await d.chooseTimingCache(null, '/x/timing.cache')).toBe('/real/timing.cache');
    expect(dialog.showOpenDialog).not.toHaveBeenCalled();
  });

  it('a packaged app ignores TBS_E2E_* and always shows the real dialogs', async () => {
    const d = createDialogs({ TBS_E2E_OPEN: '/planted/m.onnx', TBS_E2E_SAVE: '/etc/passwd', TBS_E2E_TIMING_CACHE: '/x.cache' }, { isPackaged: true });
    dialog.showOpenDialog.mockResolvedValue({ canceled: false, filePaths: ['/real/m.onnx'] });
    dialog.showSaveDialog.mockResolvedValue({ canceled: false, filePath: '/real/out.engine' });
    expect(await d.chooseModel(null)).toBe('/real/m.onnx');
    expect(await d.chooseEngineDestination(null, '/x')).toBe('/real/out.engine');
    expect(await d.chooseTimingCache(null, '/x')).toBe('/real/out.engine');
    expect(dialog.showOpenDialog).toHaveBeenCalledTimes(1);
    expect(dialog.showSaveDialog).toHaveBeenCalledTimes(2);
  });

  it('plugin libraries: an open dialog for files (several at once) starting in the given folder; cancel is none; packaged ignores TBS_E2E_PLUGIN', async () => {
    const d = createDialogs({});
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/opt/p/liba.so', '/opt/p/libb.so'] });
    expect(await d.choosePluginLibraries(null, 'dynamicPlugins', '/opt/p')).toEqual(['/opt/p/liba.so', '/opt/p/libb.so']);
    expect(dialog.showOpenDialog.mock.calls[0][0]).toMatchObject({
      defaultPath: '/opt/p',
      properties: ['openFile', 'multiSelections'],
      filters: [
        { name: 'Shared libraries', extensions: ['so', 'dll'] },
        { name: 'All files', extensions: ['*'] },
      ],
    });
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: ['/opt/p/liba.so'] });
    expect(await d.choosePluginLibraries(null, 'staticPlugins', '/opt/p')).toEqual([]);
    const stubbed = createDialogs({ TBS_E2E_PLUGIN: ['/e2e/libx.so', 'cancel'].join(path.delimiter) });
    expect(await stubbed.choosePluginLibraries(null, 'staticPlugins', '/x')).toEqual(['/e2e/libx.so']);
    expect(await stubbed.choosePluginLibraries(null, 'staticPlugins', '/x')).toEqual([]);
    const packaged = createDialogs({ TBS_E2E_PLUGIN: '/planted/libevil.so' }, { isPackaged: true });
    dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/real/lib.so'] });
    expect(await packaged.choosePluginLibraries(null, 'pluginsToSerialize', '/x')).toEqual(['/real/lib.so']);
  });

  it('resolves stubbed relative paths against the working directory', () => {
    expect(new StubAnswers('rel/m.onnx').take()).toBe(path.resolve('rel/m.onnx'));
    expect(new StubAnswers('').active).toBe(false);
    expect(new StubAnswers(undefined).active).toBe(false);
  });
});
