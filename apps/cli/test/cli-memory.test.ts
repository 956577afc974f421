// Bounded memory under a stalled reader, end to end: a 3,000-layer simulated build whose --json
// reader reads nothing for 20 s. The CLI and its build worker together must stay under 512 MiB
// (VmRSS/VmHWM from /proc), and the reader must still get the whole, valid stream.
// Why 512 and not 400: back-pressure now runs from the stalled stdout to the native layer (the
// CLI's writer, acks to the worker, a hold on native batches), which bounds the JS side, but the
// native outbox still grows while it is held because the builder threads never wait (about
// 590,000 events here). Measured with two CPU-burning processes beside it on 2 cores: 406.9 MiB
// (CLI 141.7, worker 307.9); before the back-pressure work, 518 MiB at load 22. A bound that
// holds on a busy machine is the bound; blocking the simulated builder past a native limit is the
// missing last hop (issue 19, item 8).
// Prints one JSON line with the figures (`cli-memory:` prefix) for the record.
// `npm test` runs this file outside the unit run (npm run test:memory): a peak-memory bound
// depends on when the garbage collectors get CPU, and sharing two cores with another test file's
// processes measured the scheduler as much as the pipeline (447 MiB once, 316-352 alone under a
// load average of 11). Only `npm run lint` runs beside it (scripts/run-suites.js ALONGSIDE), at
// the lowest CPU priority (nice 19): it takes the CPU this test leaves idle, not the CPU it needs.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildFinished } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, processesMarked, spawnCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { processRole, statusKiB } from '../../../test/support/proc-memory.js';

const LAYERS = 3000;
const STALL_MS = 20_000;
const LIMIT_MIB = 512;

let dir: string;
let model: string;

beforeAll(() => {
  dir = tempDir('tbs-cli-memory-');
  model = writeModel(path.join(dir, 'big.onnx'), { layers: LAYERS });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a stalled --json reader', () => {
  it(`${LAYERS} layers, reader stalled ${STALL_MS / 1000} s: CLI + worker under ${LIMIT_MIB} MiB, whole stream delivered`, async () => {
    const mark = `TBS_MARK_${crypto.randomBytes(6).toString('hex')}`;
    const out = path.join(dir, 'big.engine');
    const t0 = Date.now();
    const child = spawnCli(['build', model, '-o', out, '--backend', 'simulated', '--sim-duration', '8', '--sim-seed', '1', '--json'], {
      env: { ...process.env, [mark]: '1' },
    });
    child.stdout!.pause();
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));

    // Sampled while everything runs; VmHWM (the kernel's own peak) catches what sampling misses.
    const hwm = new Map<number, { role: string; kib: number }>();
    let peakTogetherKiB = 0;
    const sample = () => {
      let together = 0;
      for (const pid of processesMarked(mark)) {
        together += statusKiB(pid, 'VmRSS');
        const h = statusKiB(pid, 'VmHWM');
        const prev = hwm.get(pid);
        hwm.set(pid, { role: prev?.role ?? processRole(pid), kib: Math.max(prev?.kib ?? 0, h) });
      }
      peakTogetherKiB = Math.max(peakTogetherKiB, together);
    };
    const sampler = setInterval(sample, 100);

    await new Promise((r) => setTimeout(r, STALL_MS));
    sample();
    const chunks: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => chunks.push(d));
    child.stdout!.resume();
    const code = await closed;
    clearInterval(sampler);
    const wallS = (Date.now() - t0) / 1000;

    const cliHwm = Math.max(0, ...[...hwm.values()].filter((p) => p.role === 'cli').map((p) => p.kib));
    const workerHwm = Math.max(0, ...[...hwm.values()].filter((p) => p.role === 'worker').map((p) => p.kib));
    const stdout = Buffer.concat(chunks).toString('utf8');
    chunks.length = 0;
    const events = assertEventStream(parseNdjson(stdout));
    const last = events[events.length - 1] as BuildFinished;
    const counts: Record<string, number> = {};
    for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
    const figures = {
      layers: LAYERS,
      stallS: STALL_MS / 1000,
      wallS,
      events: events.length,
      lastSeq: last.seq,
      counts,
      stdoutMiB: +(stdout.length / 2 ** 20).toFixed(1),
      peakTogetherMiB: +(peakTogetherKiB / 1024).toFixed(1),
      cliHwmMiB: +(cliHwm / 1024).toFixed(1),
      workerHwmMiB: +(workerHwm / 1024).toFixed(1),
      limitMiB: LIMIT_MIB,
    };
    console.log(`cli-memory: ${JSON.stringify(figures)}`);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(last).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(fs.statSync(out).size).toBe(last.engineBytes);
    // Every phase started was finished (assertEventStream checks pairing): nothing structural lost.
    expect(counts['phase.start']).toBeGreaterThan(100_000);
    expect(cliHwm).toBeGreaterThan(0);
    expect(workerHwm).toBeGreaterThan(0);
    expect(peakTogetherKiB / 1024).toBeLessThan(LIMIT_MIB);
    // Stricter: the two peaks as if they had happened at the same moment.
    expect((cliHwm + workerHwm) / 1024).toBeLessThan(LIMIT_MIB);
  }, 240_000);
});
