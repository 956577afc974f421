// bench:watch — what watching adds to each TensorRT progress callback on the builder thread, beside
// what NVIDIA's own sample monitor (the tutorial's RichProgressMonitor: a lock, a dict and a
// whole-tree terminal render per callback) adds, in one run (issue 35: ours at most a tenth of it).
// bench/watch.py does the measuring in python3; this file is the sink its monitor streams to (a
// Unix socket that reads every line, as watch does), checks that the stream was complete, and prints
// ONE JSON object with the ratios against bench/watch-baseline.json.
//
// What this cannot measure here: real TensorRT (not installable on this machine). The callbacks
// are a replay of the stand-in's TensorRT-10-shaped build; with real bindings each callback also
// pays pybind11's trampoline and the GIL acquisition, for every variant alike (the pass-through
// baseline holds the Python call only).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareToBaseline } from './baseline.js';
import { PYTHON, REPO_ROOT, startSink } from '../test/support/fake-tensorrt/python-probe.js';

export const WATCH_BASELINE_FILE = path.join(REPO_ROOT, 'bench', 'watch-baseline.json');

interface PyStats {
  p50: number;
  p99: number;
  mean: number;
  n: number;
}

interface PyResult {
  callbacksPerBuild: number;
  rounds: number;
  python: string;
  callbackNs: Record<'none' | 'pass' | 'rich' | 'ours', PyStats>;
  addedNs: Record<'rich' | 'ours', { p50: number; p99: number; mean: number }>;
  phaseStartsSent: number;
}

function runPython(socketPath: string): Promise<PyResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [path.join(REPO_ROOT, 'bench', 'watch.py')], {
      env: { ...process.env, TBS_WATCH_SOCKET: socketPath, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bench/watch.py exited with ${String(code)}`));
      else resolve(JSON.parse(out) as PyResult);
    });
  });
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 10000) / 10000 : null);

async function main(): Promise<void> {
  const sink = await startSink();
  try {
    const py = await runPython(sink.path);
    await Promise.all(sink.connections.map((c) => c.closed));
    const lines = sink.connections.flatMap((c) => c.lines);
    const starts = lines.filter((l) => l.type === 'phase.start').length;
    const ends = lines.filter((l) => l.type === 'build.end').length;
    if (starts !== py.phaseStartsSent || ends !== py.rounds)
      throw new Error(`the sink got ${starts} phase.start and ${ends} build.end lines; the probe recorded ${py.phaseStartsSent} and ${py.rounds}`);
    const result = {
      bench: 'watch',
      what: 'ns per progress callback on the builder thread (python3, stand-in tensorrt replay); added = variant - pass-through',
      python: py.python,
      callbacksPerBuild: py.callbacksPerBuild,
      rounds: py.rounds,
      callbackNs: py.callbackNs,
      addedNs: py.addedNs,
      // The target: ours / rich <= 0.1.
      ratioOursToRich: {
        p50: ratio(py.addedNs.ours.p50, py.addedNs.rich.p50),
        p99: ratio(py.addedNs.ours.p99, py.addedNs.rich.p99),
        mean: ratio(py.addedNs.ours.mean, py.addedNs.rich.mean),
      },
      sink: { lines: lines.length, phaseStarts: starts, complete: true },
    };
    // bench/baseline.ts's comparison, on this bench's own baseline file ('watch' is not one of
    // the names it types for bench/baseline.json).
    const baseline = fs.existsSync(WATCH_BASELINE_FILE) ? compareToBaseline('watch', result, WATCH_BASELINE_FILE) : null;
    process.stdout.write(`${JSON.stringify({ ...result, baseline }, null, 2)}\n`);
  } finally {
    await sink.close();
  }
}

main().catch((e: Error) => {
  process.stderr.write(`bench:watch: ${e.message}\n`);
  process.exit(1);
});
