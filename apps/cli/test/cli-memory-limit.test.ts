// Memory limits and out-of-memory endings as a user of `trt-build-studio build` meets them (issue
// 21, "not negotiable"): the real CLI and worker, the simulator's real host memory (--sim-memory).
// - --max-host-memory below --sim-memory: cancelled with reason memory before the kernel acts,
//   the message names the limit and the phase, no engine, exit 130, build.finished carries memory;
// - the whole command in a real memory cgroup whose limit is below what --sim-memory asks (made
//   under /sys/fs/cgroup by the test, as root; skipped with the reason where that is not
//   possible): the kernel's OOM killer ends the worker, the build ends crashed "killed by the
//   out-of-memory killer at <phase path>", no engine, exit 1.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { CLI_BIN, collect, killLiveClis, parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { makeMemoryCgroup } from '../../../test/support/real-cgroup.js';

const MiB = 2 ** 20;
let dir: string;
let model: string;

beforeAll(() => {
  dir = tempDir('tbs-cli-mem-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 12 });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-seed', '3'];

describe('build: memory', () => {
  it('--max-host-memory below --sim-memory stops the build cleanly: cancelled (memory), limit and phase named, no engine, exit 130', async () => {
    const out = path.join(dir, 'limited.engine');
    const r = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '4', '--sim-memory', '1G', '--max-host-memory', '400M', '--json']);
    expect(r.code).toBe(130);
    const events = parseNdjson(r.stdout) as BuildEvent[];
    const fin = events[events.length - 1] as BuildFinished;
    expect(fin.type).toBe('build.finished');
    expect(fin.status).toBe('cancelled');
    expect(events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'memory' });
    expect(fin.error).toMatch(/^stopped: host memory .* passed the 400 MiB limit during Building engine › /);
    expect(fin.memory!.peakHostBytes).toBeGreaterThan(400 * MiB);
    expect(fin.memory!.byPhase.length).toBeGreaterThan(0);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a bad size is a usage error naming the flag', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'x.engine'), ...SIM, '--max-host-memory', 'plenty']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--max-host-memory: invalid memory size "plenty"/);
  });

  const probe = process.platform === 'linux' ? makeMemoryCgroup(256 * MiB) : 'not Linux';
  if (typeof probe !== 'string') void probe.remove(0).catch(() => undefined);
  it.skipIf(typeof probe === 'string')(
    `in a cgroup whose limit is below --sim-memory, the OOM-killed build ends crashed, named, exit 1${typeof probe === 'string' ? ` (skipped: ${probe})` : ''}`,
    async () => {
      const cg = makeMemoryCgroup(320 * MiB);
      if (typeof cg === 'string') throw new Error(cg);
      const out = path.join(dir, 'oom.engine');
      try {
        // The shell moves itself into the cgroup, then becomes the CLI: the CLI and its worker run there.
        const child = spawn(
          'sh',
          [
            '-c',
            `echo $$ > '${cg.dir}/cgroup.procs' && exec "$0" "$@"`,
            process.execPath,
            CLI_BIN,
            'build',
            model,
            '-o',
            out,
            ...SIM,
            '--sim-duration',
            '3',
            '--sim-memory',
            '2G',
            '--json',
          ],
          {
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        const r = await collect(child);
        expect(r.code, r.stderr).toBe(1);
        const events = parseNdjson(r.stdout) as BuildEvent[];
        const fin = events[events.length - 1] as BuildFinished;
        expect(fin).toMatchObject({ type: 'build.finished', status: 'crashed' });
        expect(fin.error).toMatch(/^killed by the out-of-memory killer at Building engine › .*, peak .* of 320 MiB$/);
        expect(fin.oomKill?.phasePath?.[0]).toBe('Building engine');
        expect(fs.existsSync(out)).toBe(false);
      } finally {
        await cg.remove();
      }
    },
  );
});
