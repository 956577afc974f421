import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SaveFolders } from '../save-folders.js';
import { TRT_LIB_DIR_ENV, TrtLocation } from '../trt-location.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-trt-location-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('TensorRT location setting', () => {
  it('is kept in settings.json, survives a restart, and goes to each new worker as TBS_TRT_LIB_DIR', async () => {
    const d = tmp();
    const file = path.join(d, 'settings.json');
    const lib = path.join(d, 'TensorRT-10.16', 'lib');
    fs.mkdirSync(lib, { recursive: true });
    const loc = new TrtLocation(file);
    expect(loc.get()).toBeNull();
    expect(loc.workerEnv()).toEqual({});
    await loc.set(lib);
    expect(loc.workerEnv()).toEqual({ [TRT_LIB_DIR_ENV]: lib });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ trtLibDir: lib });
    expect(new TrtLocation(file).get()).toBe(lib);
    await loc.set(null);
    expect(new TrtLocation(file).get()).toBeNull();
  });

  it('refuses a path that is not a folder, and keeps the other settings in the shared file', async () => {
    const d = tmp();
    const file = path.join(d, 'settings.json');
    const folders = new SaveFolders(file, d);
    const loc = new TrtLocation(file);
    await expect(loc.set(path.join(d, 'missing'))).rejects.toThrow(/^not a folder: /);
    // Written at the same moment by two modules: neither change is lost.
    await Promise.all([folders.remember('engine', path.join(d, 'out', 'a.engine')), loc.set(d)]);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ lastSaveFolder: { engine: path.join(d, 'out') }, trtLibDir: d });
  });

  it('is named in the unavailable TensorRT\'s reason ("TensorRT unavailable: why?"), and only there', async () => {
    const d = tmp();
    const loc = new TrtLocation(path.join(d, 'settings.json'));
    const list = [
      { name: 'tensorrt' as const, available: false, reason: 'libnvinfer.so.10 not found' },
      { name: 'simulated' as const, available: true },
    ];
    const saved = process.env[TRT_LIB_DIR_ENV];
    delete process.env[TRT_LIB_DIR_ENV];
    try {
      expect(loc.annotate(list)[0].reason).toBe('libnvinfer.so.10 not found\nNo TensorRT location is set: pick the folder holding libnvinfer.so.* in File ▸ TensorRT Location….');
      await loc.set(d);
      const [trt, sim] = loc.annotate(list);
      expect(trt.reason).toBe(`libnvinfer.so.10 not found\nTensorRT location set in the app: ${d} (change it in File ▸ TensorRT Location…).`);
      expect(sim).toEqual(list[1]);
      expect(loc.annotate([{ name: 'tensorrt', available: true, version: '10.16.1' }])[0]).not.toHaveProperty('reason');
    } finally {
      if (saved !== undefined) process.env[TRT_LIB_DIR_ENV] = saved;
    }
  });
});
