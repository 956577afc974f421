// Issue 40 item 3, unit level: every hash the service takes (engine, model, timing cache, plugin
// libraries) and the manifest read open the file once by descriptor with O_NONBLOCK and refuse
// what is not a regular file, so a FIFO at any of those paths is an error at once, never a wait
// for a writer. Each call is raced against a generous timer: a hang fails the test, not the run.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelDigest, openRegularFile, pluginLibraries, readManifest, sha256File, sha256FileSync } from '../engine-manifest-file.js';

let dir: string;
let fifo: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-regular-'));
  fifo = path.join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  execFileSync('mkfifo', [`${path.join(dir, 'e.engine')}.manifest.json`]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function within<T>(p: Promise<T>, ms = 5000): Promise<T> {
  return Promise.race([p, new Promise<T>((_r, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms))]);
}

describe('reads of regular files only', () => {
  it('refuses a FIFO at once, naming it, in every reader', async () => {
    await expect(within(sha256File(fifo))).rejects.toThrow(`${fifo} is a FIFO, not a regular file`);
    expect(() => sha256FileSync(fifo)).toThrow(`${fifo} is a FIFO, not a regular file`);
    await expect(within(modelDigest(fifo, []))).rejects.toThrow(/is a FIFO/);
    fs.writeFileSync(path.join(dir, 'm.onnx'), 'graph');
    await expect(within(modelDigest(path.join(dir, 'm.onnx'), ['pipe']))).rejects.toThrow(/pipe is a FIFO/);
    await expect(within(pluginLibraries({ backend: 'tensorrt', staticPlugins: [fifo] } as never))).rejects.toThrow(/is a FIFO/);
    await expect(within(openRegularFile(dir))).rejects.toThrow(/is a directory/);
    const m = readManifest(path.join(dir, 'e.engine'));
    expect(m.ok).toBe(false);
    expect(!m.ok && m.message).toMatch(/is a FIFO/);
  });

  it('reads regular files as before, and a missing one is null', async () => {
    const f = path.join(dir, 'a.bin');
    fs.writeFileSync(f, 'abc');
    expect(await sha256File(f)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256FileSync(f)).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(await sha256File(path.join(dir, 'none'))).toBeNull();
    expect(await modelDigest(f, [])).toEqual({ sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', bytes: 3 });
  });
});
