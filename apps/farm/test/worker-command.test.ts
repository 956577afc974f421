// `trt-build-studio worker` refuses bad command lines with a message naming the flag (exit 2),
// before it touches Redis.
import { describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { collect, spawnCli } from '../../../test/support/cli.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

const run = (args: string[]) => collect(spawnCli(['worker', ...args]));

describe('worker command line', () => {
  it.each([
    [[], /--queue redis:\/\/host:port is required/],
    [['--queue', 'http://x'], /--queue: "http:\/\/x" must start with redis:\/\//],
    [['--queue', 'redis://127.0.0.1:1', '--labels', 'gpu'], /--labels: "gpu" is not key=value/],
    [['--queue', 'redis://127.0.0.1:1', '--labels', 'gpu=a b'], /label "gpu" needs a value without spaces/],
    [['--queue', 'redis://127.0.0.1:1', '--concurrency', '0'], /--concurrency: expected an integer from 1 to 64, got "0"/],
    [['--queue', 'redis://127.0.0.1:1', '--cache-lock', 'maybe'], /--cache-lock: expected build or off, got "maybe"/],
    [['--queue', 'redis://127.0.0.1:1', '--bogus'], /unknown option --bogus/],
    [['--queue', 'redis://127.0.0.1:1', '--gpus', 'two'], /--gpus: expected all, a list of device numbers \(0,2,3\) or sim:N, got "two"/],
    [['--queue', 'redis://127.0.0.1:1', '--gpus', 'sim:0'], /--gpus sim:N: N must be from 1 to 64/],
    [['--queue', 'redis://127.0.0.1:1', '--gpus', '0,0'], /device listed twice/],
    [['--queue', 'redis://127.0.0.1:1', '--gpus', 'sim:2', '--concurrency', '2'], /leave --concurrency out/],
  ])('%j', async (args, message) => {
    const r = await run(args as string[]);
    // Its stderr when it is not 2: an exit 1 seen once here was the CLI failing to load its
    // modules while dist/ was being rebuilt beside the test run, not the worker's usage check.
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/usage: trt-build-studio worker/);
  });

  it('--plugin-dir: a folder that is not there, and one in the artifact folder (uploads), are refused before Redis is touched', async () => {
    const dir = tempDir('tbs-worker-plugin-dir-');
    try {
      const missing = await run(['--queue', 'redis://127.0.0.1:1', '--plugin-dir', path.join(dir, 'nope')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--plugin-dir .*nope: no such folder/);
      const art = path.join(dir, 'art');
      fs.mkdirSync(path.join(art, 'uploads'), { recursive: true, mode: 0o700 });
      const uploads = await run(['--queue', 'redis://127.0.0.1:1', '--artifacts', art, '--plugin-dir', path.join(art, 'uploads')]);
      expect(uploads.code).toBe(2);
      expect(uploads.stderr).toMatch(/--plugin-dir .*uploads: overlaps the farm's artifact folder \(engines, timing caches, uploads\)/);
      // Nor one that holds the artifact folder.
      const around = await run(['--queue', 'redis://127.0.0.1:1', '--artifacts', art, '--plugin-dir', dir]);
      expect(around.code).toBe(2);
      expect(around.stderr).toMatch(/overlaps the farm's artifact folder/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints its usage with --help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--labels k=v/);
    expect(r.stdout).toMatch(/--plugin-dir DIR/);
  });
});
