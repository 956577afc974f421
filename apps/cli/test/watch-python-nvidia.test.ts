// The Python probe against NVIDIA's own binding code: a `tensorrt` module compiled from
// python/src of NVIDIA/TensorRT (release/10.16: pyFoundationalTypes, pyGraph, pyCore, utils) over
// the project's fake libnvinfer (native/test/trt/fake_full_nvinfer.cc, which drives the attached
// IProgressMonitor from several C++ threads). So the monitor trampoline (PyProgressMonitor), its
// GIL acquisition per callback from TensorRT's threads, the GIL release around
// build_serialized_network and "an exception in step_complete cancels" are NVIDIA's code here,
// not a stand-in's. What is still not NVIDIA's: the library underneath (a fake), so no real phase
// tree, and no real engine.
//
// Building the module takes minutes (NVIDIA's pyCore.cpp is a large pybind11 unit) and needs the
// NVIDIA/TensorRT sources, which are not in this repository: run
//   TBS_TRT_MIRROR=<NVIDIA/TensorRT clone> TBS_TRT_INCLUDE=<its 10.16 include/> test/support/fake-tensorrt/nvidia-bindings/build.sh build/nvidia-py-bindings
// first (see that script for what it needs). Without the module these tests are skipped.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildLines, checkBuild, PYTHON_PKG, REPO_ROOT, runPython, startSink, type ProbeSink } from '../../../test/support/fake-tensorrt/python-probe';

const MODULE_DIR = process.env.TBS_NVIDIA_PY_BINDINGS ?? path.join(REPO_ROOT, 'build', 'nvidia-py-bindings');
const built = fs.existsSync(MODULE_DIR) && fs.readdirSync(MODULE_DIR).some((f) => /^tensorrt\..*\.so$/.test(f));

const PRELUDE = `
import sys, json
import tensorrt as trt
assert getattr(trt, "STAND_IN", True) is False, "not NVIDIA's bindings: " + trt.__file__
def build(directives, monitor=None):
    b = trt.Builder(trt.Logger(trt.Logger.WARNING))
    n = b.create_network(0)
    n.name = directives
    c = b.create_builder_config()
    if monitor is not None:
        c.progress_monitor = monitor
    r = b.build_serialized_network(n, c)
    return r, c
class Rec(trt.IProgressMonitor):
    def __init__(self, raise_at=None, cancel_at=None):
        trt.IProgressMonitor.__init__(self)
        self.steps = 0; self.starts = 0; self.finishes = 0; self.raise_at = raise_at; self.cancel_at = cancel_at
    def phase_start(self, n, p, s): self.starts += 1
    def step_complete(self, n, i):
        self.steps += 1
        if self.steps == self.raise_at: raise ValueError("boom")
        return self.steps != self.cancel_at
    def phase_finish(self, n): self.finishes += 1
def size(r): return None if r is None else r.nbytes
def report(**kw): print("RESULT " + json.dumps(kw), flush=True)
`;

function result(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`the program printed no RESULT line:\n${stdout}`);
  return JSON.parse(line.slice(7)) as Record<string, unknown>;
}

let sink: ProbeSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

async function closedAll(s: ProbeSink, n: number): Promise<void> {
  for (let i = 0; i < 100 && s.connections.length < n; i++) await new Promise((r) => setTimeout(r, 20));
  await Promise.all(s.connections.map((c) => c.closed));
}

// The stand-in's folder stays off the path: NVIDIA's module comes first.
const run = (script: string, env: Record<string, string>) => runPython(script, { extraPath: [MODULE_DIR], env });

describe.skipIf(!built)('watch hook over NVIDIA’s tensorrt bindings (fake libnvinfer)', () => {
  it('streams a build whose callbacks come from several C++ threads through NVIDIA’s trampoline', async () => {
    sink = await startSink();
    const r = await run(
      `${PRELUDE}
m = Rec()
r, c = build("threads 4\\nsteps 50\\nengine-bytes 5000", m)
report(size=size(r), steps=m.steps, starts=m.starts, finishes=m.finishes, back=c.progress_monitor is m)
`,
      { TBS_WATCH_SOCKET: sink.path },
    );
    expect(r.stderr).toBe('');
    // 4 workers x 50 steps, the parent's 3 and the root's 1; 2 + 4 phases.
    expect(result(r.stdout)).toEqual({ size: 5000, steps: 204, starts: 6, finishes: 6, back: true });
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build[0]).toMatchObject({ api: 'Builder.build_serialized_network', chained: true, network: { layers: 0, inputs: [], outputs: [] } });
    const starts = build.filter((l) => l.type === 'phase.start').map((l) => l.name);
    expect(starts.sort()).toEqual([
      'Building engine',
      'Measuring tactic time 0',
      'Measuring tactic time 1',
      'Measuring tactic time 2',
      'Measuring tactic time 3',
      'Timing graph nodes',
    ]);
    // Each worker's last step reached the stream (steps coalesce; the last one never is lost).
    for (let t = 0; t < 4; t++) {
      const steps = build.filter((l) => l.type === 'phase.step' && l.name === `Measuring tactic time ${t}`);
      expect(steps.at(-1)?.step).toBe(49);
    }
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: 'engine', bytes: 5000, cancelled: false });
  });

  it('an exception in the program’s monitor cancels: NVIDIA’s trampoline prints it and the build returns None', async () => {
    sink = await startSink();
    const r = await run(
      `${PRELUDE}
m = Rec(raise_at=10)
r, c = build("threads 2\\nsteps 50", m)
report(size=size(r), back=c.progress_monitor is m)
`,
      { TBS_WATCH_SOCKET: sink.path },
    );
    expect(result(r.stdout)).toEqual({ size: null, back: true });
    // NVIDIA's words, then the Python traceback pybind11 appends.
    expect(r.stderr).toMatch(/^\[ERROR\] Exception caught in step_complete\(\): ValueError: boom\n/);
    expect(r.stderr).not.toContain('trt-build-studio');
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.at(-1)).toMatchObject({ result: 'null', cancelled: false });
  });

  it('a cancel from the sink stops a build that runs until cancelled; the program gets None', async () => {
    sink = await startSink();
    sink.onLine = (line, conn) => {
      if (line.type === 'phase.step' && String(line.name).startsWith('Measuring tactic time')) conn.cancel(1);
    };
    const r = await run(
      `${PRELUDE}
m = Rec()
r, c = build("wait-cancel\\nthreads 2", m)
report(size=size(r), back=c.progress_monitor is m)
`,
      { TBS_WATCH_SOCKET: sink.path },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ size: null, back: true });
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.at(-1)).toMatchObject({ result: 'null', cancelled: true });
  });

  it('without a program monitor, the hook’s own is the config’s for the call only (None again after)', async () => {
    sink = await startSink();
    const r = await run(
      `${PRELUDE}
r, c = build("threads 1\\nsteps 5")
report(size=size(r), after=repr(c.progress_monitor))
`,
      { TBS_WATCH_SOCKET: sink.path },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ size: 4096, after: 'None' });
    await closedAll(sink, 1);
    expect(checkBuild(buildLines(sink.connections[0].lines, 1))).toEqual([]);
  });

  it('the drop-in subclasses NVIDIA’s IProgressMonitor: forward_to sees every callback and its False cancels; plain lines without a sink', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'xdg-'));
    const r = await runPython(
      `${PRELUDE}
import trt_build_studio as tbs
m = Rec(cancel_at=30)
d = tbs.monitor(forward_to=m)
r, c = build("threads 2\\nsteps 50", d)
report(size=size(r), steps=m.steps, starts=m.starts, finishes=m.finishes, isinstance=isinstance(d, trt.IProgressMonitor))
`,
      { hook: false, extraPath: [PYTHON_PKG, MODULE_DIR], env: { XDG_RUNTIME_DIR: xdg } },
    );
    expect(r.stderr).toBe('');
    const res = result(r.stdout);
    expect(res).toMatchObject({ size: null, isinstance: true, starts: 4, finishes: 4 });
    expect(res.steps).toBeGreaterThanOrEqual(30);
    expect(r.stdout).toContain('[trt-build-studio] build 1 started');
    expect(r.stdout).toMatch(/\[trt-build-studio\] build 1 finished after \d+\.\ds/);
    fs.rmSync(xdg, { recursive: true, force: true });
  });
});
