// bench:worker-cpu — what the event path costs in CPU time: a CLI `build --json` of a simulated
// build at bench:ui's rate (10,000 layers in 30 s, ~178k callbacks/s at the source), its stdout
// read and thrown away, and the CPU-seconds of the build worker and of the CLI (the host: the
// service's session, --json's writer) measured from /proc. CPU time, not wall time: on a shared
// machine it barely moves with the load of others, so old and new code compare within one run.
// Prints one JSON object. Usage: npm run bench:worker-cpu [-- --layers N --seconds S]
//                                                       [-- --against DIR --rounds N]
// --against DIR runs a checkout of earlier code (built there) the same way, alternating with ours
// for N rounds (default 2), and prints both sets of medians with ratios (ours / earlier).
// bench:ui reports the same split (cpuSeconds.byProcess: worker, node) for serve and the page.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempDir, writeModel } from '../test/support/onnx-gen';
import { treeCpu } from './proc-cpu';

const ROOT = path.resolve(__dirname, '..', '..');
/** How often the process tree is read: a process's last reading before it exits is its figure. */
const SAMPLE_MS = 50;

function strArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function arg(name: string, fallback: number): number {
  const v = strArg(name);
  return v === undefined ? fallback : Number(v);
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export interface CpuRun {
  /** CPU-seconds of the build worker process (user + system). */
  workerCpuS: number;
  /** CPU-seconds of the CLI process itself (the host), without its worker. */
  hostCpuS: number;
  wallS: number;
  /** Lines the CLI wrote to stdout (one per event): equal runs carry equal events. */
  events: number;
  /** The build's own duration (build.finished's durationMs, s): longer than --sim-duration when the event path held it back. */
  buildS: number;
  loadavg1AtStart: number;
}

/** One CLI build of `model` by the checkout at `root`, with its processes' CPU time sampled. */
async function runOnce(root: string, model: string, seconds: number, dir: string): Promise<CpuRun> {
  const loadavg1AtStart = round(os.loadavg()[0]);
  const out = path.join(dir, `run-${Date.now()}.engine`);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin', 'trt-build-studio.js'), 'build', model, '-o', out, '--backend', 'simulated', '--sim-duration', String(seconds), '--sim-seed', '7', '--json'],
    { cwd: root, env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache'), TBS_STATE_DIR: path.join(dir, 'state') }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let events = 0;
  let tail = '';
  let err = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    for (let i = chunk.indexOf('\n'); i >= 0; i = chunk.indexOf('\n', i + 1)) events++;
    tail = (tail + chunk).slice(-65536);
  });
  child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4096)));
  // The worker is the CLI's child: its last reading while alive is its cost (it exits first).
  let worker = 0;
  let host = 0;
  const sample = () => {
    const t = treeCpu(child.pid!);
    if (!Number.isFinite(t.total)) return;
    worker = Math.max(worker, t.byKind.worker ?? 0);
    host = Math.max(host, t.byKind.node ?? 0);
  };
  const timer = setInterval(sample, SAMPLE_MS);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearInterval(timer);
  const wallS = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`build by ${root} exited ${code}: ${err.trim()}`);
  // The tail's first line may be cut: only whole lines that name build.finished are read.
  const line = tail
    .trim()
    .split('\n')
    .find((l) => l.startsWith('{') && l.includes('"type":"build.finished"'));
  const finished = line ? (JSON.parse(line) as { durationMs?: number }) : undefined;
  return {
    workerCpuS: round(worker),
    hostCpuS: round(host),
    wallS: round(wallS),
    events,
    buildS: round((finished?.durationMs ?? NaN) / 1000),
    loadavg1AtStart,
  };
}

async function main(): Promise<void> {
  const layers = arg('layers', 10_000);
  const seconds = arg('seconds', 30);
  const against = strArg('against');
  const rounds = Math.max(1, Math.floor(arg('rounds', 2)));
  const dir = tempDir('tbs-bench-cpu-');
  try {
    const model = writeModel(path.join(dir, 'bench.onnx'), { layers, channels: 1 });
    const setup = { layers, simSeconds: seconds, cpus: os.cpus().length };
    if (!against) {
      const run = await runOnce(ROOT, model, seconds, dir);
      console.log(JSON.stringify({ ...setup, ...run, loadavg1AtEnd: round(os.loadavg()[0]) }, null, 2));
      return;
    }
    const earlierRoot = path.resolve(against);
    if (!fs.existsSync(path.join(earlierRoot, 'bin', 'trt-build-studio.js'))) throw new Error(`--against ${against}: bin/trt-build-studio.js missing`);
    const ours: CpuRun[] = [];
    const earlier: CpuRun[] = [];
    // Alternating, the first of each round alternating too, so both meet the same machine load.
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        earlier.push(await runOnce(earlierRoot, model, seconds, dir));
        ours.push(await runOnce(ROOT, model, seconds, dir));
      } else {
        ours.push(await runOnce(ROOT, model, seconds, dir));
        earlier.push(await runOnce(earlierRoot, model, seconds, dir));
      }
    }
    const figures: Record<string, { ours: number; earlier: number; ratio: number | null; better: string }> = {};
    for (const [name, better] of [
      ['workerCpuS', 'lower'],
      ['hostCpuS', 'lower'],
      ['buildS', 'lower'],
      ['wallS', 'lower'],
    ] as const) {
      const o = median(ours.map((r) => r[name]));
      const e = median(earlier.map((r) => r[name]));
      figures[name] = { ours: round(o), earlier: round(e), ratio: e === 0 || !Number.isFinite(o / e) ? null : round(o / e, 3), better };
    }
    console.log(
      JSON.stringify(
        {
          ...setup,
          againstEarlier: { checkout: earlierRoot, rounds, note: 'medians of alternating runs; ratio = ours / earlier', figures, runs: { ours, earlier } },
          loadavg1AtEnd: round(os.loadavg()[0]),
        },
        null,
        2,
      ),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
