// `build --json` into readers that do not keep up: a reader that stalls, one that closes early,
// and a Ctrl-C at any moment of the command's start. The stream must stay whole and valid.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { collect, killLiveClis, leftoverMarked, parseNdjson, spawnCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;

beforeAll(() => {
  dir = tempDir('tbs-cli-stream-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('build --json with a slow or vanishing reader', () => {
  it('a reader that stalls longer than the build still gets the whole stream, ending with build.finished', async () => {
    const out = path.join(dir, 'slow.engine');
    const child = spawnCli(['build', model, '-o', out, '--backend', 'simulated', '--sim-duration', '1', '--sim-seed', '3', '--json']);
    // Not reading: the pipe fills, the CLI's writes stop being accepted.
    child.stdout!.pause();
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    // Longer than the build, and longer than the 3 s the CLI's entry point waits before it forces
    // an exit: output that were still queued then would be cut.
    await sleep(5000);
    let stdout = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stdout!.resume();
    const code = await closed;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const events = assertEventStream(parseNdjson(stdout));
    const last = events[events.length - 1] as BuildFinished;
    expect(last).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(fs.statSync(out).size).toBe(last.engineBytes);
    // The stream used to end after one pipe buffer (~64 KiB, about 500 lines).
    expect(stdout.length).toBeGreaterThan(128 * 1024);
  }, 60_000);

  it('a reader that closes early stops the build quietly: no stack trace, no worker, no output file', async () => {
    const out = path.join(dir, 'closed.engine');
    const mark = `TBS_MARK_${crypto.randomBytes(6).toString('hex')}`;
    const child = spawnCli(['build', model, '-o', out, '--backend', 'simulated', '--sim-duration', '4', '--json'], {
      env: { ...process.env, [mark]: '1' },
    });
    const done = collect(child);
    // Read the first line, then go away like `| head -1`.
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    child.stdout!.destroy();
    const r = await done;
    // The build was cancelled because nobody reads it: the cancelled exit code.
    expect(r.code).toBe(130);
    expect(r.stderr).not.toMatch(/Error|\bat .*:\d+:\d+/);
    expect(fs.existsSync(out)).toBe(false);
    expect(await leftoverMarked(mark, 8000)).toEqual([]);
  }, 60_000);
});

describe('Ctrl-C while build --json starts up', () => {
  // Measured from the spawn. A signal that lands while Node itself is still starting (before any
  // of the command's code runs) ends the process the default way, with nothing started and
  // nothing printed; from the moment the command runs, the stream always ends with build.finished.
  for (const delayMs of [0, 50, 200, 500]) {
    it(`SIGINT ${delayMs} ms after the start: a valid stream ending with a cancelled build.finished`, async () => {
      const out = path.join(dir, `early-${delayMs}.engine`);
      const mark = `TBS_MARK_${crypto.randomBytes(6).toString('hex')}`;
      const child = spawnCli(['build', model, '-o', out, '--backend', 'simulated', '--sim-duration', '3', '--json'], {
        env: { ...process.env, [mark]: '1' },
      });
      const done = collect(child);
      await new Promise((r) => child.once('spawn', r));
      if (delayMs > 0) await sleep(delayMs);
      child.kill('SIGINT');
      const r = await done;
      expect(fs.existsSync(out)).toBe(false);
      expect(await leftoverMarked(mark, 8000)).toEqual([]);
      if (r.signal === 'SIGINT') {
        // Only possible before the command's code ran: then no build ever existed.
        expect(r.stdout).toBe('');
        expect(delayMs).toBeLessThan(500);
        return;
      }
      expect(r.code).toBe(130);
      const events = assertEventStream(parseNdjson(r.stdout)) as BuildEvent[];
      expect(events[events.length - 1]).toMatchObject({ type: 'build.finished', status: 'cancelled' });
      expect(events.some((e) => e.type === 'build.cancelling')).toBe(true);
    }, 60_000);
  }
});
