// `build -o` with names near the file system's 255-byte limit: the CLI goes through the service's
// validation, so a name that fits builds, and a too-long -o or --timing-cache name exits 2 before
// any build (never "File name too long" after it).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killLiveClis, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const SIM = ['--backend', 'simulated', '--sim-duration', '0.2', '--sim-seed', '5'];

beforeAll(() => {
  dir = tempDir('tbs-cli-long-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 2 });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('build with long names', () => {
  it('-o with the longest name that fits (219 bytes, CJK included) builds the engine there', async () => {
    // 255 bytes less the 36 of the longest ".tmp-<pid>-<n>": 70 CJK characters (210 bytes) and ".engine" (7).
    const out = path.join(dir, `${'模'.repeat(70)}xx.engine`);
    expect(Buffer.byteLength(path.basename(out))).toBe(219);
    const r = await runCli(['build', model, '-o', out, ...SIM]);
    expect(r.stderr).not.toMatch(/too long/i);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(out).subarray(0, 20).toString()).toBe('TRT-BUILD-STUDIO SIM');
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('-o with a final name that leaves no room for the temp file exits 2 before building', async () => {
    const out = path.join(dir, `${'o'.repeat(216)}.engine`); // 223 bytes: 255 less the 36 of ".tmp-<pid>-<n>" is 219
    const r = await runCli(['build', model, '-o', out, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/output file name is too long: "o+\.engine" is 223 bytes of UTF-8, at most 219 fit \(file systems allow 255 bytes per name/);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('ooo'))).toEqual([]);
  });

  it('--timing-cache with a name too long for its sidecars exits 2 before building', async () => {
    const cache = path.join(dir, `${'c'.repeat(180)}`);
    const r = await runCli(['build', model, '-o', path.join(dir, 'e.engine'), '--timing-cache', cache, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/timingCache file name is too long: "c+" is 180 bytes of UTF-8, at most 179 fit/);
    expect(fs.existsSync(path.join(dir, 'e.engine'))).toBe(false);
  });
});
