// The Python probe (python/: the watch hook and the trt_build_studio drop-in) against a small probe
// sink written here, running real python3 processes. TensorRT is not installable on this machine:
// `tensorrt` is the stand-in in test/support/fake-tensorrt (written from the documented API and
// NVIDIA's binding source, with its trampoline's "an exception in step_complete cancels";
// NOT NVIDIA's bindings), which drives a TensorRT-10-shaped phase tree from several threads.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildLines, checkBuild, PYTHON, PYTHON_PKG, runPython, startSink, type ProbeLine, type ProbeSink } from '../../../test/support/fake-tensorrt/python-probe';

// Shared by the programs below: a network with one input and output, and a program monitor that
// records every callback (and can answer False, or raise, at its k-th step).
const PRELUDE = `
import sys, json, threading
import tensorrt as trt
def net(b, name="net"):
    n = b.create_network(); n.name = name
    i = n.add_input("x", trt.DataType.FLOAT, (1, 3, -1))
    n.mark_output(n.add_identity(i).get_output(0))
    return n
class Rec(trt.IProgressMonitor):
    def __init__(self, cancel_at=None, raise_at=None):
        trt.IProgressMonitor.__init__(self)
        self.calls = []; self.steps = 0; self.cancel_at = cancel_at; self.raise_at = raise_at
    def phase_start(self, n, p, s): self.calls.append(["s", n, p, s])
    def step_complete(self, n, i):
        self.calls.append(["p", n, i]); self.steps += 1
        if self.raise_at == self.steps: raise ValueError("boom")
        return not (self.cancel_at == self.steps)
    def phase_finish(self, n): self.calls.append(["f", n])
def size(r): return None if r is None else len(r)
def report(**kw): print("RESULT " + json.dumps(kw), flush=True)
`;

function result(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`the program printed no RESULT line:\n${stdout}`);
  return JSON.parse(line.slice(7)) as Record<string, unknown>;
}

/** Per phase instance (in start order): its name and the last step reported before its finish. */
function lastSteps(events: Array<{ kind: 's' | 'p' | 'f'; name: string; step?: number }>): string[] {
  const open = new Map<string, number>();
  const out: Array<[string, number | null]> = [];
  const index = new Map<string, number>();
  for (const e of events) {
    if (e.kind === 's') {
      index.set(e.name, out.length);
      out.push([e.name, null]);
      open.set(e.name, -1);
    } else if (e.kind === 'p') {
      const i = index.get(e.name);
      if (i !== undefined) out[i][1] = e.step ?? null;
    } else open.delete(e.name);
  }
  return out.map(([n, s]) => `${n}@${String(s)}`);
}

function fromStream(lines: ProbeLine[]) {
  return lines
    .filter((l) => l.type.startsWith('phase.'))
    .map((l) => ({ kind: (l.type === 'phase.start' ? 's' : l.type === 'phase.step' ? 'p' : 'f') as 's' | 'p' | 'f', name: l.name as string, step: l.step as number | undefined }));
}

function fromProgram(calls: unknown[][]) {
  return calls.map((c) => ({ kind: c[0] as 's' | 'p' | 'f', name: c[1] as string, step: c[0] === 'p' ? (c[2] as number) : undefined }));
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

describe('watch hook (python/watch_hook/sitecustomize.py)', () => {
  it('does nothing at all without TBS_WATCH_SOCKET', async () => {
    const r = await runPython(`${PRELUDE}
import os
b = trt.Builder(); c = b.create_builder_config()
wrapped = getattr(trt.Builder.build_serialized_network, "_tbs_wrapped", False)
r = b.build_serialized_network(net(b), c)
report(wrapped=wrapped, loaded="trt_build_studio" in sys.modules, size=size(r), finders=[type(f).__name__ for f in sys.meta_path], hooked=os.environ.get("TBS_WATCH_HOOKED_PID"))
`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const res = result(r.stdout);
    expect(res).toMatchObject({ wrapped: false, loaded: false, size: 1017, hooked: null });
    expect(res.finders).not.toContain('_TensorRTFinder');
  });

  it('under watch, a process that never imports tensorrt loads nothing of the probe and connects nowhere', async () => {
    sink = await startSink();
    const r = await runPython(
      `
import sys, os
print("RESULT", "trt_build_studio" in sys.modules, [type(f).__name__ for f in sys.meta_path][0], os.environ.get("TBS_WATCH_HOOKED_PID"))
`,
      { env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('RESULT False _TensorRTFinder None');
    await new Promise((res) => setTimeout(res, 200));
    expect(sink.connections).toHaveLength(0);
  });

  it('streams a plain build: hello, build.begin with what the objects say, every phase, build.end', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); c.set_flag(trt.BuilderFlag.FP16)
c.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, 1 << 30)
c.set_timing_cache(c.create_timing_cache(b"\\0" * 96), False)
r = b.build_serialized_network(net(b, "mnist"), c)
import os
hooked = os.environ.get("TBS_WATCH_HOOKED_PID") == str(os.getpid())
# A forked child (no exec) claims its own builds from the native shim at its first build.
pid = os.fork()
if pid == 0:
    b.build_serialized_network(net(b, "forked"), c)
    sys.exit(0 if os.environ.get("TBS_WATCH_HOOKED_PID") == str(os.getpid()) else 3)  # atexit runs
_, status = os.waitpid(pid, 0)
# The parent's connection survived its child's exit.
r2 = b.build_serialized_network(net(b, "again"), c)
report(size=size(r), monitor=repr(c.progress_monitor), hooked=hooked, forked=os.waitstatus_to_exitcode(status), again=size(r2))
`,
      { env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ size: 1019, monitor: 'None', hooked: true, forked: 0, again: 1019 });
    await closedAll(sink, 2);
    expect(sink.connections).toHaveLength(2);
    // The forked child: its own connection, its own hello and build 1.
    const forked = sink.connections[1].lines;
    expect(forked[0]).toMatchObject({ type: 'hello', ppid: sink.connections[0].lines[0].pid });
    expect(buildLines(forked, 1)[0]).toMatchObject({ type: 'build.begin', network: { name: 'forked' } });
    expect(checkBuild(buildLines(forked, 1))).toEqual([]);
    // The parent's second build, after the child exited, arrived whole.
    const again = buildLines(sink.connections[0].lines, 2);
    expect(again[0]).toMatchObject({ network: { name: 'again' } });
    expect(checkBuild(again)).toEqual([]);
    const lines = sink.connections[0].lines;
    expect(lines[0]).toMatchObject({ type: 'hello', v: 1, probe: 'python-hook', trtVersion: '10.16.0+standin', exe: expect.any(String), cwd: expect.any(String) });
    expect((lines[0].argv as string[]).some((a) => a.endsWith('prog.py'))).toBe(true);
    expect(lines[1]).toEqual({
      type: 'build.begin',
      build: 1,
      api: 'Builder.build_serialized_network',
      network: {
        name: 'mnist',
        layers: 1,
        inputs: [{ name: 'x', shape: [1, 3, -1], dtype: 'FLOAT' }],
        outputs: [{ name: '(Unnamed Layer* 0) [Identity]_output', shape: [1, 3, -1], dtype: 'FLOAT' }],
      },
      config: { flags: ['FP16', 'TF32'], optimizationLevel: 3, workspaceBytes: 1 << 30, profilingVerbosity: 'LAYER_NAMES_ONLY' },
      timingCache: { entries: 3, bytes: 96 },
      chained: false,
    });
    const build = buildLines(lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: 'engine', bytes: 1019, cancelled: false });
    // The tree a TensorRT 10 build reports, from the root to the deepest level.
    const starts = build.filter((l) => l.type === 'phase.start');
    expect(starts[0]).toMatchObject({ name: 'Building engine', parent: null, steps: 6 });
    expect(starts.some((l) => l.name === 'Measuring tactic time' && l.parent === 'Evaluating tactic times')).toBe(true);
    expect(starts.some((l) => l.name === 'Determining refit engines')).toBe(true);
  });

  it('chains the program monitor: it sees every callback, the stream has every start and finish and each phase’s last step, and the monitor is back afterwards', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = m
r = b.build_serialized_network(net(b), c)
report(size=size(r), back=c.progress_monitor is m, calls=m.calls)
`,
      { env: { TBS_WATCH_SOCKET: sink.path, FAKE_TRT_SEED: '11' } },
    );
    expect(r.stderr).toBe('');
    const res = result(r.stdout);
    expect(res.back).toBe(true);
    expect(res.size).toBe(1017);
    // Unwatched, the same program monitor gets exactly the same callbacks.
    const plain = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = m
b.build_serialized_network(net(b), c)
report(calls=m.calls)
`,
      { hook: false, env: { FAKE_TRT_SEED: '11' } },
    );
    const calls = res.calls as unknown[][];
    expect(calls).toEqual(result(plain.stdout).calls);
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build[0]).toMatchObject({ type: 'build.begin', chained: true });
    const stream = fromStream(build);
    const program = fromProgram(calls);
    expect(stream.filter((e) => e.kind !== 'p')).toEqual(program.filter((e) => e.kind !== 'p'));
    expect(lastSteps(stream)).toEqual(lastSteps(program));
    expect(stream.filter((e) => e.kind === 'p').length).toBeLessThanOrEqual(program.filter((e) => e.kind === 'p').length);
  });

  it('the program monitor’s False still cancels; the program gets None and its monitor back', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(cancel_at=40); c.progress_monitor = m
r = b.build_engine_with_config(net(b), c)
report(result=None if r is None else "engine", steps=m.steps, back=c.progress_monitor is m)
`,
      { env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ result: null, steps: 40, back: true });
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build[0]).toMatchObject({ api: 'Builder.build_engine_with_config', chained: true });
    // Cancelled by the program, not by the studio: the probe's flag was never set.
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: 'null', cancelled: false });
  });

  it('an exception in the program monitor cancels as NVIDIA’s trampoline does, and the program sees the build’s result', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(raise_at=25); c.progress_monitor = m
r = b.build_serialized_network(net(b), c)
report(size=size(r), steps=m.steps, back=c.progress_monitor is m)
`,
      { env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(result(r.stdout)).toEqual({ size: null, steps: 25, back: true });
    // The stand-in's trampoline message (NVIDIA's text), once, and nothing from the probe.
    expect(r.stderr).toBe('[ERROR] Exception caught in step_complete(): ValueError: boom\n');
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: 'null', cancelled: false });
  });

  it('a cancel line from the sink ends the build at its next step: None for the program, cancelled in build.end', async () => {
    sink = await startSink();
    sink.onLine = (line, conn) => {
      if (line.type === 'phase.start' && line.name === 'Timing graph nodes') conn.cancel(1);
    };
    const r = await runPython(
      `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = m
r = b.build_serialized_network(net(b), c)
report(size=size(r), steps=m.steps, back=c.progress_monitor is m)
`,
      { env: { TBS_WATCH_SOCKET: sink.path, FAKE_TRT_STEP_DELAY: '0.002' } },
    );
    expect(r.stderr).toBe('');
    const res = result(r.stdout);
    expect(res).toMatchObject({ size: null, back: true });
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: 'null', cancelled: true });
    // It stopped inside the timing phase: what comes after it never started.
    expect(build.some((l) => l.type === 'phase.start' && l.name === 'Determining refit engines')).toBe(false);
  });

  it('numbers two builds of one program on one connection (cancel "*" reaches the open one only)', async () => {
    sink = await startSink();
    sink.onLine = (line, conn) => {
      if (line.type === 'phase.start' && line.build === 1 && line.name === 'Optimizing graph') conn.cancel('*');
    };
    const r = await runPython(
      `${PRELUDE}
import io
b = trt.Builder(); c = b.create_builder_config()
r1 = b.build_serialized_network(net(b, "first"), c)
out = io.BytesIO()
ok = b.build_serialized_network_to_stream(net(b, "second"), c, out)
report(first=size(r1), second=ok, written=len(out.getvalue()))
`,
      { env: { TBS_WATCH_SOCKET: sink.path, FAKE_TRT_STEP_DELAY: '0.001', FAKE_TRT_SCALE: '0.3' } },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ first: null, second: true, written: 1020 });
    await closedAll(sink, 1);
    expect(sink.connections).toHaveLength(1);
    const lines = sink.connections[0].lines;
    expect(lines.filter((l) => l.type === 'hello')).toHaveLength(1);
    const b1 = buildLines(lines, 1);
    const b2 = buildLines(lines, 2);
    expect(checkBuild(b1)).toEqual([]);
    expect(checkBuild(b2)).toEqual([]);
    expect(b1[0]).toMatchObject({ network: { name: 'first' } });
    expect(b1.at(-1)).toMatchObject({ result: 'null', cancelled: true });
    expect(b2[0]).toMatchObject({ api: 'Builder.build_serialized_network_to_stream', network: { name: 'second' } });
    expect(b2.at(-1)).toMatchObject({ result: 'engine', cancelled: false });
  });

  it('a child process opens its own connection', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
import os, subprocess, tempfile
child = os.path.join(tempfile.mkdtemp(), "child.py")
with open(child, "w") as f:
    f.write("import tensorrt as trt\\nb = trt.Builder()\\nn = b.create_network(); n.name = 'child'\\nprint(len(b.build_serialized_network(n, b.create_builder_config())))\\n")
out = subprocess.run([sys.executable, child], capture_output=True, text=True)
b = trt.Builder(); n = b.create_network(); n.name = "parent"
r = b.build_serialized_network(n, b.create_builder_config())
report(child=out.stdout.strip(), child_err=out.stderr, parent=size(r), pid=os.getpid())
`,
      { env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(r.stderr).toBe('');
    const res = result(r.stdout);
    expect(res).toMatchObject({ child: '1019', child_err: '', parent: 1020 });
    await closedAll(sink, 2);
    expect(sink.connections).toHaveLength(2);
    const hellos = sink.connections.map((c) => c.lines[0]);
    const parent = sink.connections.find((c) => c.lines[0].pid === res.pid)!;
    const child = sink.connections.find((c) => c.lines[0].pid !== res.pid)!;
    expect(hellos.every((h) => h.type === 'hello')).toBe(true);
    expect(child.lines[0].ppid).toBe(res.pid);
    expect(buildLines(child.lines, 1)[0]).toMatchObject({ network: { name: 'child' } });
    expect(buildLines(parent.lines, 1)[0]).toMatchObject({ network: { name: 'parent' } });
    expect(checkBuild(buildLines(child.lines, 1))).toEqual([]);
    expect(checkBuild(buildLines(parent.lines, 1))).toEqual([]);
  });

  it('runs the sitecustomize it hides, with and without TBS_WATCH_SOCKET', async () => {
    const user = fs.mkdtempSync(path.join(os.tmpdir(), 'usersite-'));
    fs.writeFileSync(path.join(user, 'sitecustomize.py'), 'import builtins\nbuiltins.USER_SITE_RAN = True\nMARK = "user"\n');
    const prog = `${PRELUDE}
import builtins, sitecustomize
b = trt.Builder()
r = b.build_serialized_network(net(b), b.create_builder_config())
report(ran=getattr(builtins, "USER_SITE_RAN", False), mark=getattr(sitecustomize, "MARK", None), size=size(r))
`;
    const off = await runPython(prog, { extraPath: [user] });
    expect(off.stderr).toBe('');
    expect(result(off.stdout)).toEqual({ ran: true, mark: 'user', size: 1017 });
    sink = await startSink();
    const on = await runPython(prog, { extraPath: [user], env: { TBS_WATCH_SOCKET: sink.path } });
    expect(on.stderr).toBe('');
    expect(result(on.stdout)).toEqual({ ran: true, mark: 'user', size: 1017 });
    await closedAll(sink, 1);
    expect(checkBuild(buildLines(sink.connections[0].lines, 1))).toEqual([]);
    fs.rmSync(user, { recursive: true, force: true });
  });

  it('an unreachable sink: one warning, and the builds return what they return unwatched', async () => {
    const prog = `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = m
r1 = b.build_serialized_network(net(b), c)
r2 = b.build_serialized_network(net(b), c)
report(sizes=[size(r1), size(r2)], steps=m.steps, back=c.progress_monitor is m)
`;
    const plain = await runPython(prog, { hook: false });
    const r = await runPython(prog, { env: { TBS_WATCH_SOCKET: path.join(os.tmpdir(), 'nobody-listens.sock') } });
    expect(r.code).toBe(0);
    expect(result(r.stdout)).toEqual(result(plain.stdout));
    const warnings = r.stderr.split('\n').filter(Boolean);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^trt-build-studio: could not reach the sink: .*; the build goes on unwatched$/);
  });

  it('a sink that closes mid-build: one warning, the build goes on and returns the same value', async () => {
    sink = await startSink();
    sink.onLine = (line, conn) => {
      if (line.type === 'phase.start' && line.name === 'Optimizing graph') conn.socket.destroy();
    };
    const prog = `${PRELUDE}
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = m
r1 = b.build_serialized_network(net(b), c)
r2 = b.build_serialized_network(net(b), c)
report(sizes=[size(r1), size(r2)], steps=m.steps, back=c.progress_monitor is m)
`;
    const r = await runPython(prog, { env: { TBS_WATCH_SOCKET: sink.path, FAKE_TRT_STEP_DELAY: '0.0005', FAKE_TRT_SCALE: '0.3' } });
    const plain = await runPython(prog, { hook: false, env: { FAKE_TRT_SCALE: '0.3' } });
    expect(result(r.stdout)).toEqual(result(plain.stdout));
    const warnings = r.stderr.split('\n').filter(Boolean);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^trt-build-studio: .*; the build goes on unwatched$/);
  });
});

describe('drop-in trt_build_studio.monitor()', () => {
  it('without a sink, draws plain lines (no escape sequences) when stdout is not a terminal', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'xdg-'));
    const r = await runPython(
      `${PRELUDE}
import trt_build_studio as tbs
b = trt.Builder(); c = b.create_builder_config(); m = Rec(); c.progress_monitor = tbs.monitor(forward_to=m)
r = b.build_serialized_network(net(b), c)
report(size=size(r), steps=m.steps)
`,
      { hook: false, extraPath: [PYTHON_PKG], env: { XDG_RUNTIME_DIR: xdg } },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toMatchObject({ size: 1017 });
    expect(r.stdout).not.toMatch(/\x1b/);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('[trt-build-studio]'));
    expect(lines[0]).toBe('[trt-build-studio] build 1 started');
    expect(lines).toContain('[trt-build-studio]      0.0s Building engine (6 steps)');
    expect(lines.some((l) => /^\[trt-build-studio\] +\d+\.\ds {5}Optimizing graph \(33 steps\)$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[trt-build-studio\] build 1 finished after \d+\.\ds$/);
    // The deep, frequent phases stay out of a log.
    expect(lines.some((l) => l.includes('Measuring tactic time'))).toBe(false);
    fs.rmSync(xdg, { recursive: true, force: true });
  });

  it('finds a running studio through its discovery file, refusing one that others can read', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'xdg-'));
    const folder = path.join(xdg, 'trt-build-studio');
    fs.mkdirSync(folder, { mode: 0o700 });
    sink = await startSink(folder);
    const file = path.join(folder, `studio-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ v: 1, pid: process.pid, url: 'http://127.0.0.1:1', token: 't', probeSocket: sink.path, kind: 'serve' }), { mode: 0o644 });
    const prog = `${PRELUDE}
import trt_build_studio as tbs
b = trt.Builder(); c = b.create_builder_config(); c.progress_monitor = tbs.monitor()
r = b.build_serialized_network(net(b), c)
report(size=size(r))
`;
    const refused = await runPython(prog, { hook: false, extraPath: [PYTHON_PKG], env: { XDG_RUNTIME_DIR: xdg } });
    expect(result(refused.stdout)).toEqual({ size: 1017 });
    expect(refused.stdout).toContain('[trt-build-studio] build 1 started'); // the terminal instead
    expect(sink.connections).toHaveLength(0);
    fs.chmodSync(file, 0o600);
    const r = await runPython(prog, { hook: false, extraPath: [PYTHON_PKG], env: { XDG_RUNTIME_DIR: xdg } });
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ size: 1017 });
    expect(r.stdout).not.toContain('[trt-build-studio]');
    await closedAll(sink, 1);
    const lines = sink.connections[0].lines;
    expect(lines[0]).toMatchObject({ type: 'hello', probe: 'python' });
    const build = buildLines(lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build[0]).toMatchObject({ type: 'build.begin', api: 'IProgressMonitor', chained: false });
    // A drop-in cannot see what the build call returned.
    expect(build.at(-1)).toMatchObject({ type: 'build.end', result: null, cancelled: false });
    fs.rmSync(xdg, { recursive: true, force: true });
  });

  it('under watch, a drop-in and the hook make one build, not two', async () => {
    sink = await startSink();
    const r = await runPython(
      `${PRELUDE}
import trt_build_studio as tbs
b = trt.Builder(); c = b.create_builder_config(); m = Rec(cancel_at=30); d = tbs.monitor(forward_to=m); c.progress_monitor = d
r = b.build_serialized_network(net(b), c)
report(size=size(r), steps=m.steps, back=c.progress_monitor is d)
`,
      { extraPath: [PYTHON_PKG], env: { TBS_WATCH_SOCKET: sink.path } },
    );
    expect(r.stderr).toBe('');
    expect(result(r.stdout)).toEqual({ size: null, steps: 30, back: true });
    await closedAll(sink, 1);
    const lines = sink.connections[0].lines;
    expect(lines.filter((l) => l.type === 'build.begin')).toHaveLength(1);
    const build = buildLines(lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build[0]).toMatchObject({ api: 'Builder.build_serialized_network', chained: true });
    expect(build.at(-1)).toMatchObject({ result: 'null', cancelled: false });
  });
});

describe('bench:watch (bench/watch.py)', () => {
  it('measures every variant and streams every callback of its watched rounds to the sink (no timing asserted)', async () => {
    sink = await startSink();
    const r = await runPython('', { file: path.join(PYTHON_PKG, '..', 'bench', 'watch.py'), hook: false, env: { TBS_WATCH_SOCKET: sink.path, BENCH_WATCH_ROUNDS: '1' } });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { callbacksPerBuild: number; callbackNs: Record<string, { n: number }>; phaseStartsSent: number };
    expect(Object.keys(out.callbackNs)).toEqual(['none', 'pass', 'rich', 'ours']);
    for (const v of Object.values(out.callbackNs)) expect(v.n).toBe(out.callbacksPerBuild);
    await closedAll(sink, 1);
    const build = buildLines(sink.connections[0].lines, 1);
    expect(checkBuild(build)).toEqual([]);
    expect(build.filter((l) => l.type === 'phase.start')).toHaveLength(out.phaseStartsSent);
  });
});

describe('drop-in on a terminal', () => {
  const script = ['/usr/bin/script', '/bin/script'].find((f) => fs.existsSync(f));
  it.skipIf(!script)('redraws the tree in place and clears it before the program prints again (under script(1)’s pseudo-terminal)', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'xdg-'));
    const prog = `${PRELUDE}
import trt_build_studio as tbs
b = trt.Builder(); c = b.create_builder_config(); c.progress_monitor = tbs.monitor()
r = b.build_serialized_network(net(b), c)
print("AFTER", size(r), sys.stdout.isatty())
`;
    // script(1) runs the program on a pseudo-terminal and copies what it drew to our stdout.
    const r = await runPython(prog, {
      hook: false,
      extraPath: [PYTHON_PKG],
      env: { XDG_RUNTIME_DIR: xdg, FAKE_TRT_STEP_DELAY: '0.0003', FAKE_TRT_SCALE: '0.3' },
      argv: [script!, '-qec', `${PYTHON} {file}`, '/dev/null'],
    });
    const out = r.stdout;
    expect(out).toContain('\x1b[2K');
    expect(out).toMatch(/\[[=-]{10}\] Building engine \d\/6/);
    const finished = out.indexOf('[trt-build-studio] build 1 finished after');
    const after = out.indexOf('AFTER 1017 True');
    expect(finished).toBeGreaterThan(0);
    expect(after).toBeGreaterThan(finished);
    // Nothing drawn after the program's own line.
    expect(out.slice(after)).not.toContain('\x1b[');
    fs.rmSync(xdg, { recursive: true, force: true });
  });
});
