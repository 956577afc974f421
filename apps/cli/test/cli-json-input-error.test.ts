// `build --json` speaks JSON on an input error too: an agent or CI job reading stdout gets the
// contract's last line, a build.finished that stands for no build (buildId ""), status failed
// and the error, while stderr and the exit code stay as a person sees them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildFinishedEvent } from '../../shared/protocol.js';
import { requireBuilt, runCli } from '../../../test/support/cli.js';
import { tempDir, writeBadFile, writeModel } from '../../../test/support/onnx-gen.js';

requireBuilt();
let dir: string;
let model: string;
let broken: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-json-err-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 3 });
  broken = writeBadFile(path.join(dir, 'broken.onnx'), 'random');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** stdout must be exactly one JSON line, a valid build.finished for no build. */
function onlyFinished(stdout: string) {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  const ev = BuildFinishedEvent.parse(JSON.parse(lines[0]!));
  expect(ev.buildId).toBe('');
  expect(ev.status).toBe('failed');
  return ev;
}

describe('build --json on an input error', () => {
  it('a bad flag: one failed build.finished naming it, exit 2', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'a.engine'), '--json', '--opt-level', '9']);
    expect(r.code, r.stderr).toBe(2);
    expect(onlyFinished(r.stdout).error).toMatch(/--opt-level expects a whole number from 0 to 5, got "9"/);
    expect(r.stderr).toMatch(/--opt-level/);
  });

  it("a refused model: one failed build.finished with the reader's reason, exit 2, no engine", async () => {
    const engine = path.join(dir, 'b.engine');
    const r = await runCli(['build', broken, '-o', engine, '--json', '--backend', 'simulated']);
    expect(r.code, r.stderr).toBe(2);
    const ev = onlyFinished(r.stdout);
    expect(ev.error!.length).toBeGreaterThan(0);
    expect(r.stderr).toContain(ev.error!.split('\n')[0]!.slice(0, 40));
    expect(fs.existsSync(engine)).toBe(false);
  });

  it('trtexec --json with a flag it does not know: the same line, naming the flag, exit 2', async () => {
    const r = await runCli(['trtexec', `--onnx=${model}`, `--saveEngine=${path.join(dir, 'd.engine')}`, '--json', '--bogus']);
    expect(r.code, r.stderr).toBe(2);
    expect(onlyFinished(r.stdout).error).toMatch(/--bogus/);
  });

  it('without --json stdout stays empty', async () => {
    const r = await runCli(['build', broken, '-o', path.join(dir, 'c.engine'), '--backend', 'simulated']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });
});
