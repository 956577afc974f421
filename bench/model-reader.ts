// bench:model — `trt-build-studio inspect` against Python's `onnx.load` on a 1 GiB single-file
// model, each as a whole process (start-up included), side by side in one run. Prints ONE JSON
// object: median wall time and peak RSS of each, the ratio, and whether both report the same
// inputs, outputs, node count and opsets. Also the CLI's start-up (inspect of a tiny model) next
// to a bare `node -e 0`.
//
// The model is one big float32 initializer behind a small graph, written in a stream (never in
// memory) to a temporary folder and deleted afterwards. Peak RSS comes from GNU time's %M
// (/usr/bin/time), the maximum resident set of the measured process itself.
//
//   TBS_BENCH_MODEL_MIB=1024 (default)  TBS_BENCH_RUNS=3 (default)
//   TBS_BENCH_PYTHON=/usr/bin/python3 (default when present: the interpreter with python3-onnx)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeLargeModel, writeModel } from '../test/support/onnx-gen.js';

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'trt-build-studio.js');
const MODEL_MIB = Number(process.env.TBS_BENCH_MODEL_MIB ?? 1024);
const RUNS = Number(process.env.TBS_BENCH_RUNS ?? 3);
const TIME = '/usr/bin/time';
// Debian's python3-onnx lives with the system interpreter, not with a pyenv/venv one on PATH.
const PYTHON = process.env.TBS_BENCH_PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

// The same facts from onnx.load, in the reader's terms (initializers listed as inputs are weights).
const PY = `
import json, sys, onnx
m = onnx.load(sys.argv[1])
g = m.graph
inits = {i.name for i in g.initializer}
print(json.dumps({
  "inputs": [i.name for i in g.input if i.name not in inits],
  "outputs": [o.name for o in g.output],
  "nodeCount": len(g.node),
  "opsets": [[o.domain or "ai.onnx", o.version] for o in m.opset_import],
}))
`;

interface Answers {
  inputs: string[];
  outputs: string[];
  nodeCount: number;
  opsets: Array<[string, number]>;
}

interface Run {
  ms: number;
  peakRssMiB: number;
  stdout: string;
}

/** Runs `cmd` under GNU time; wall time measured here, peak RSS (KiB) read from time's output file. */
function timed(cmd: string, args: string[]): Promise<Run> {
  const rssFile = path.join(os.tmpdir(), `tbs-bench-rss-${process.pid}-${Math.random().toString(36).slice(2)}`);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(TIME, ['-f', '%M', '-o', rssFile, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      let kib = NaN;
      try {
        kib = Number(fs.readFileSync(rssFile, 'utf8').trim().split('\n').pop());
        fs.rmSync(rssFile, { force: true });
      } catch {
        // Reported as NaN below.
      }
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.slice(0, 500)}`));
      else resolve({ ms, peakRssMiB: kib / 1024, stdout });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

function inspectAnswers(json: string): Answers {
  const s = JSON.parse(json);
  return {
    inputs: s.inputs.map((i: { name: string }) => i.name),
    outputs: s.outputs.map((o: { name: string }) => o.name),
    nodeCount: s.nodeCount,
    opsets: s.opsetImports.map((o: { domain: string; version: number }) => [o.domain, o.version]),
  };
}

async function main(): Promise<void> {
  if (!fs.existsSync(TIME)) throw new Error(`${TIME} (GNU time) is needed to measure peak memory`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-bench-model-'));
  try {
    const big = writeLargeModel(path.join(dir, 'big.onnx'), MODEL_MIB * 2 ** 20);
    const tiny = writeModel(path.join(dir, 'tiny.onnx'), { layers: 2 });

    const ours: Run[] = [];
    const theirs: Run[] = [];
    // Alternate, so both see the same machine load and the same page cache.
    for (let i = 0; i < RUNS; i++) {
      ours.push(await timed(process.execPath, [BIN, 'inspect', big.path, '--json']));
      theirs.push(await timed(PYTHON, ['-c', PY, big.path]));
    }
    const bare: number[] = [];
    const startup: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push((await timed(process.execPath, ['-e', '0'])).ms);
      startup.push((await timed(process.execPath, [BIN, 'inspect', tiny])).ms);
    }

    const a = inspectAnswers(ours[0].stdout);
    const b: Answers = JSON.parse(theirs[0].stdout);
    const answersMatch = JSON.stringify(a) === JSON.stringify(b) && ours.every((r) => r.stdout === ours[0].stdout);
    const inspectMs = median(ours.map((r) => r.ms));
    const onnxMs = median(theirs.map((r) => r.ms));
    const inspectPeak = Math.max(...ours.map((r) => r.peakRssMiB));
    const ratio = onnxMs / inspectMs;
    process.stdout.write(
      JSON.stringify({
        bench: 'model-reader',
        modelBytes: fs.statSync(big.path).size,
        runs: RUNS,
        inspect: { medianMs: round(inspectMs), peakRssMiB: round(inspectPeak) },
        onnxLoad: { medianMs: round(onnxMs), peakRssMiB: round(Math.max(...theirs.map((r) => r.peakRssMiB))) },
        ratio: round(ratio, 2),
        answersMatch,
        answers: a,
        startup: { bareNodeMs: round(median(bare)), inspectTinyModelMs: round(median(startup)) },
        targets: { ratioAtLeast: 10, peakRssMiBBelow: 150 },
        pass: answersMatch && ratio >= 10 && inspectPeak < 150,
      }) + '\n',
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`bench:model: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
