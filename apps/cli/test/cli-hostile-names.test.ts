// Issue 40 item 5 in the CLI: a path or name with terminal controls (ESC ]0;…, ESC [2J, CR,
// U+202E) in an error comes out escaped, and a very long one comes out cut with its length named;
// `--json` keeps exact values. Also the time budget limit as the CLI says it (item 7). The real CLI.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const env = () => ({ ...process.env, TBS_STATE_DIR: path.join(dir, 'state') });

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-cli-hostile-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('CLI errors quoting hostile names', () => {
  it('escapes controls in a missing model path and cuts a 100k-character one, naming its length', async () => {
    const controls = ['\u001b]0;owned\u0007', '\u001b[2J', '\rOK ', '\u202e', '\u0085'];
    for (const c of controls) {
      const r = await runCli(['build', path.join(dir, `m${c}x.onnx`), '-o', path.join(dir, 'a.engine'), '--backend', 'simulated'], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/not found/);
      expect(r.stderr).not.toMatch(UNSAFE);
    }
    const long = path.join(dir, 'd'.repeat(100_000));
    const r = await runCli(['build', long, '-o', path.join(dir, 'b.engine'), '--backend', 'simulated'], { env: env() });
    expect(r.code).not.toBe(0);
    expect(r.stderr.length).toBeLessThan(3000);
    expect(r.stderr).toMatch(/… \(\d{6} characters\)/);
  });

  it('refuses a time budget past the limit, naming it, instead of cancelling at once', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'c.engine'), '--backend', 'simulated', '--time-budget', '9'.repeat(12)], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is more than the limit of \d+ seconds/);
  });
});
