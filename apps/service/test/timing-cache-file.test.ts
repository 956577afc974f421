// The timing-cache path check before a build: only an absent file or a regular file that is (or
// may be) a timing cache passes; FIFOs, sockets, devices, directories and files that are clearly
// something else (a model, an engine, a config) are refused with a message naming the file.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendInfo } from '../../shared/protocol.js';
import { ServiceError } from '../api.js';
import { validateBuild } from '../build-validation.js';
import { checkTimingCacheFile, MAX_TIMING_CACHE_BYTES, SIM_TIMING_CACHE_MAGIC } from '../timing-cache-file.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-cache-check-');
let server: net.Server | undefined;
afterAll(() => {
  server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function refusal(f: () => unknown): ServiceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).code).toBe('bad_input');
    return e as ServiceError;
  }
  throw new Error('expected the path to be refused');
}

const file = (name: string, bytes: string | Buffer) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
};
// Shaped like a simulated cache: header, version 1, entry count, entries, checksum.
const simCache = Buffer.concat([Buffer.from(SIM_TIMING_CACHE_MAGIC), Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(8)]);
// Binary bytes of no known format: what an undocumented TensorRT cache may look like.
const opaque = Buffer.from([0x01, 0x00, 0x00, 0x00, 0xa7, 0x3c, 0x00, 0x10, 0xff, 0x00, 0x42, 0x17, 0x00, 0x00]);

describe('file types', () => {
  beforeAll(async () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    fs.symlinkSync(path.join(dir, 'fifo'), path.join(dir, 'link-to-fifo'));
    fs.mkdirSync(path.join(dir, 'folder'));
    fs.symlinkSync(path.join(dir, 'folder'), path.join(dir, 'link-to-folder'));
    fs.symlinkSync(path.join(dir, 'gone'), path.join(dir, 'dangling'));
    server = net.createServer();
    await new Promise<void>((resolve) => server!.listen(path.join(dir, 'sock'), resolve));
  });

  it('accepts a cache that does not exist yet, in a writable folder', () => {
    expect(() => checkTimingCacheFile(path.join(dir, 'new.cache'))).not.toThrow();
    expect(() => checkTimingCacheFile(path.join(dir, 'new.cache'), 'simulated')).not.toThrow();
  });

  it.each([
    ['fifo', /timing cache .*\/fifo is a FIFO \(named pipe\), not a regular file/],
    ['link-to-fifo', /timing cache .*\/link-to-fifo is a symbolic link to a FIFO \(named pipe\) \(.*\/fifo\)/],
    ['folder', /timing cache .*\/folder is a directory/],
    ['link-to-folder', /is a symbolic link to a directory/],
    ['dangling', /timing cache .*\/dangling is a symbolic link to a missing file \(.*\/gone\)/],
    ['sock', /timing cache .*\/sock is a socket/],
  ])('refuses %s, at once', (name, message) => {
    const t0 = Date.now();
    expect(refusal(() => checkTimingCacheFile(path.join(dir, name))).message).toMatch(message);
    expect(Date.now() - t0).toBeLessThan(2000); // a FIFO used to hang the build forever
  });

  it('refuses a device', () => {
    expect(refusal(() => checkTimingCacheFile('/dev/null')).message).toMatch(/\/dev\/null is a character device, not a regular file/);
  });

  it('refuses a file above 2 GiB (sparse, so the test writes nothing)', () => {
    const big = path.join(dir, 'huge.cache');
    fs.writeFileSync(big, simCache);
    fs.truncateSync(big, MAX_TIMING_CACHE_BYTES + 1);
    expect(refusal(() => checkTimingCacheFile(big)).message).toMatch(/huge\.cache is 2147483649 bytes, above the 2 GiB limit/);
  });
});

describe('content', () => {
  const model = writeModel(path.join(dir, 'model.onnx'), { layers: 2 });

  it.each([
    ['an ONNX model', model, /model\.onnx is not a timing cache: it looks like an ONNX model/],
    ['a simulated engine', 'TRT-BUILD-STUDIO SIMULATED ENGINE - NOT A TENSORRT ENGINE\n{"format":1}\n', /an engine file of the simulated backend/],
    ['a TensorRT engine', Buffer.concat([Buffer.from([0x00, 0x00, 0x00, 0x00]), Buffer.from('ftrt'), Buffer.alloc(64)]), /looks like a TensorRT engine/],
    ['JSON', '{\n  "timingCache": "x"\n}\n', /looks like a text file \(timing caches are binary\)/],
    ['YAML', 'build:\n  fp16: true\n', /a text file \(timing caches are binary\)/],
    ['an INI config with UTF-8', '[cache]\npath = /tmp/é.cache\n', /a text file/],
    ['a ZIP archive', Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(30)]), /a ZIP archive/],
    ['an ELF library', Buffer.concat([Buffer.from('\x7fELF', 'latin1'), Buffer.alloc(30)]), /an ELF executable/],
  ])('refuses %s for any backend', (_what, content, message) => {
    const p = typeof content === 'string' && content.startsWith('/') ? content : file(`x-${_what.replace(/\W+/g, '-')}`, content);
    const before = fs.readFileSync(p);
    // Whatever the backend (the simulated one included), a file that is recognisably something
    // else is named as such.
    for (const backend of [undefined, 'auto', 'tensorrt', 'simulated'] as const) {
      expect(refusal(() => checkTimingCacheFile(p, backend)).message).toMatch(message);
    }
    expect(fs.readFileSync(p).equals(before)).toBe(true);
  });

  it('names a text file by its kind and quotes none of its bytes (it may be a secret)', () => {
    const secret = 'root:$6$Zq9salt$hashhashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
    const p = file('shadow-like', secret);
    for (const backend of [undefined, 'auto', 'tensorrt', 'simulated'] as const) {
      const message = refusal(() => checkTimingCacheFile(p, backend)).message;
      expect(message).toMatch(/shadow-like is not a timing cache: it looks like a text file/);
      // No piece of the file (its fields, 3 characters or more) appears in the message.
      for (const piece of secret.split(/[:\n*$]+/).filter((t) => t.length >= 3)) expect(message).not.toContain(piece);
    }
  });

  it('accepts binary bytes of no known format unless the backend is simulated (TensorRT decides)', () => {
    const p = file('opaque.cache', opaque);
    expect(() => checkTimingCacheFile(p)).not.toThrow();
    expect(() => checkTimingCacheFile(p, 'tensorrt')).not.toThrow();
    expect(refusal(() => checkTimingCacheFile(p, 'simulated')).message).toMatch(
      /opaque\.cache is not a simulated timing cache \(it does not start with "TBSSIMTC"\)\. Give a new path/,
    );
  });

  it('accepts a simulated cache for the simulated backend and refuses it for TensorRT', () => {
    const p = file('sim.cache', simCache);
    expect(() => checkTimingCacheFile(p)).not.toThrow();
    expect(() => checkTimingCacheFile(p, 'auto')).not.toThrow();
    expect(() => checkTimingCacheFile(p, 'simulated')).not.toThrow();
    expect(refusal(() => checkTimingCacheFile(p, 'tensorrt')).message).toMatch(/sim\.cache is a timing cache of the simulated backend; TensorRT cannot use it/);
  });

  it('accepts an empty file (an empty cache) and a symlink to a cache', () => {
    const p = file('empty.cache', '');
    expect(() => checkTimingCacheFile(p, 'simulated')).not.toThrow();
    fs.symlinkSync(file('target.cache', simCache), path.join(dir, 'link.cache'));
    expect(() => checkTimingCacheFile(path.join(dir, 'link.cache'), 'simulated')).not.toThrow();
  });
});

describe('before a build is queued', () => {
  const model = writeModel(path.join(dir, 'fixed.onnx'), { layers: 2 });
  const simOnly: BackendInfo[] = [
    { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' },
    { name: 'simulated', available: true, version: 'sim-1' },
  ];
  const ctx = { id: 'b1-x', outputDir: path.join(dir, 'out'), backends: async () => simOnly };

  it.each([
    ['another model', () => writeModel(path.join(dir, 'other.onnx'), { layers: 1 }), /looks like an ONNX model/],
    ['a config file', () => file('settings.yaml', 'cache: here\n'), /looks like a text file/],
    ['a FIFO', () => (execFileSync('mkfifo', [path.join(dir, 'fifo2')]), path.join(dir, 'fifo2')), /is a FIFO/],
  ])('validateBuild refuses %s as timingCache, leaving it as it was', async (_what, make, message) => {
    const p = make();
    const before = fs.lstatSync(p);
    const err = await validateBuild({ modelPath: model, options: { timingCache: p } }, ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(message);
    expect(fs.lstatSync(p).mtimeMs).toBe(before.mtimeMs);
  });
});
