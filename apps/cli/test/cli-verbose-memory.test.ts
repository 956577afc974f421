// A build that logs the simulator's whole verbose quota (200,000 lines) through a --json reader
// that stalls stays bounded in memory and time. Every hop's bound is in bytes (docs/architecture.md,
// "Bounds"), so long log lines fill them sooner rather than costing more; the stalled build
// pauses (the builder waits in its log callback too). A memory bound: it runs in
// `npm run test:memory`, not beside other test files (its peak depends on when the collectors get
// CPU); only `npm run lint` runs beside it (scripts/run-suites.js ALONGSIDE).
// Prints one JSON line with the figures (`cli-verbose-volume:` prefix) for the record.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, processesMarked, spawnCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { processRole, statusKiB } from '../../../test/support/proc-memory.js';

/** The simulator's cap on verbose lines per build (native/src/sim/sim_backend.cc). */
const SIM_VERBOSE_CAP = 200_000;

let dir: string;

beforeAll(() => {
  dir = tempDir('tbs-cli-verbose-mem-');
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// ─────────────────────────────── volume ───────────────────────────────

// Enough tactics for the simulator's whole verbose quota (3,000 layers already exceed it).
const LAYERS = 3_000;
const STALL_MS = 8_000;
/**
 * What --verbose may add to the peak of CLI + worker over the same build without it: the hops'
 * byte bounds (66 MiB, as in cli-memory.test.ts) and a margin for the collectors (64 MiB). Long
 * lines fill the same bounds sooner; they do not widen them (measured: +1.8 MiB with two busy
 * loops beside it). Was 200 MiB while the native outbox was unbounded.
 */
const VERBOSE_EXTRA_MIB = 66 + 64;
/** The build pauses while its reader stalls (back-pressure), so the stall adds to its time. */
const WALL_LIMIT_S = 120 + STALL_MS / 1000;

interface Run {
  code: number | null;
  stderr: string;
  wallS: number;
  events: BuildEvent[];
  stdoutMiB: number;
  /** VmHWM (the kernel's own peak) of the CLI and of its worker, summed as if both peaked at once. */
  peakMiB: number;
  cliMiB: number;
  workerMiB: number;
}

/** A simulated build of `model` whose --json reader reads nothing for STALL_MS, then everything. */
async function stalledBuild(big: string, extra: string[]): Promise<Run> {
  const mark = `TBS_MARK_${crypto.randomBytes(6).toString('hex')}`;
  const t0 = Date.now();
  const child = spawnCli(['build', big, '-o', path.join(dir, 'big.engine'), '--backend', 'simulated', '--sim-duration', '4', '--sim-seed', '3', '--json', ...extra], {
    env: { ...process.env, [mark]: '1' },
  });
  child.stdout!.pause();
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const hwm = new Map<number, { role: string; kib: number }>();
  const sample = () => {
    for (const pid of processesMarked(mark)) {
      const prev = hwm.get(pid);
      hwm.set(pid, { role: prev?.role ?? processRole(pid), kib: Math.max(prev?.kib ?? 0, statusKiB(pid, 'VmHWM')) });
    }
  };
  const sampler = setInterval(sample, 100);
  try {
    await new Promise((r) => setTimeout(r, STALL_MS));
    sample();
    const chunks: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => chunks.push(d));
    child.stdout!.resume();
    const code = await closed;
    const wallS = (Date.now() - t0) / 1000;
    const stdout = Buffer.concat(chunks).toString('utf8');
    const peak = (r: string) => Math.max(0, ...[...hwm.values()].filter((p) => p.role === r).map((p) => p.kib));
    expect(peak('cli')).toBeGreaterThan(0);
    expect(peak('worker')).toBeGreaterThan(0);
    return {
      code,
      stderr,
      wallS,
      events: assertEventStream(parseNdjson(stdout)),
      stdoutMiB: +(stdout.length / 2 ** 20).toFixed(1),
      peakMiB: +((peak('cli') + peak('worker')) / 1024).toFixed(1),
      cliMiB: +(peak('cli') / 1024).toFixed(1),
      workerMiB: +(peak('worker') / 1024).toFixed(1),
    };
  } finally {
    clearInterval(sampler);
  }
}

describe('a huge verbose build', () => {
  it(`${LAYERS} layers, --json reader stalled ${STALL_MS / 1000} s: --verbose delivers the whole verbose quota and adds under ${VERBOSE_EXTRA_MIB} MiB to the peak`, async () => {
    const big = writeModel(path.join(dir, 'big.onnx'), { layers: LAYERS });
    const plain = await stalledBuild(big, []);
    const loud = await stalledBuild(big, ['--verbose']);
    const verbose = (r: Run) => r.events.filter((e) => e.type === 'log' && e.severity === 'verbose').length;
    const figures = (r: Run) => ({
      wallS: r.wallS,
      events: r.events.length,
      verbose: verbose(r),
      stdoutMiB: r.stdoutMiB,
      peakMiB: r.peakMiB,
      cliMiB: r.cliMiB,
      workerMiB: r.workerMiB,
    });
    console.log(`cli-verbose-volume: ${JSON.stringify({ layers: LAYERS, stallS: STALL_MS / 1000, without: figures(plain), with: figures(loud) })}`);

    for (const r of [plain, loud]) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' } satisfies Partial<BuildFinished>);
      expect(r.wallS).toBeLessThan(WALL_LIMIT_S);
    }
    expect(verbose(plain)).toBe(0);
    // Nothing is dropped on the way: the whole quota, then the simulator's note that it stopped.
    expect(verbose(loud)).toBe(SIM_VERBOSE_CAP);
    expect(loud.events.some((e) => e.type === 'log' && /Simulated verbose log stops after 200000 lines/.test(e.message))).toBe(true);
    expect(loud.peakMiB - plain.peakMiB).toBeLessThan(VERBOSE_EXTRA_MIB);
  }, 400_000);
});
