// `watch -- <program>` end to end: the real CLI (bin → dist) runs a scripted program with a fake
// probe inside (fixtures/fake-probe-program.js: it speaks the probe protocol of docs/watch.md as
// the Python hook or the C++ shim would; it is not TensorRT), with real signals, and, for the
// studio cases, a real `serve` published in a private registry folder of the test's own.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { killLiveClis, spawnCli } from '../../../test/support/cli.js';

const PROGRAM = path.join(__dirname, 'fixtures', 'fake-probe-program.js');
let xdg: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-watch-xdg-'));
  // A registry of the test's own: a studio the user runs is never found (nor disturbed).
  env = { ...process.env, XDG_RUNTIME_DIR: xdg, TBS_NO_STUDIO: undefined };
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(xdg, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  done: Promise<number | null>;
}

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Running {
  const child = spawnCli(args, { env: { ...env, ...extraEnv } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, err: () => err, done };
}

const watch = (scenario: string[], opts: string[] = ['--no-studio'], extraEnv: NodeJS.ProcessEnv = {}) =>
  run(['watch', ...opts, '--', process.execPath, PROGRAM, ...scenario], extraEnv);

async function until(what: string, pred: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every stdout line is a protocol event; returned parsed. */
function events(stdout: string): BuildEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => BuildEvent.parse(JSON.parse(l)));
}

function finishes(evs: BuildEvent[]) {
  return evs.filter((e): e is Extract<BuildEvent, { type: 'build.finished' }> => e.type === 'build.finished');
}

describe('watch -- <program>', () => {
  it("plain lines when piped: the watched header, the tree, the ending; the program's output and exit code", async () => {
    const w = watch(['plain', '4']);
    expect(await w.done).toBe(4);
    const out = w.out();
    expect(out).toContain('program got: engine1');
    expect(out).toMatch(/Watched: .*fake-probe-program\.js plain 4 \(pid \d+\) · Builder\.build_serialized_network · network net1 \(12 layers\)/);
    expect(out).toContain('Backend: TensorRT 10.16.1');
    expect(out).toContain('✓ Building engine 3/3');
    expect(out).toMatch(/Succeeded in .*engine 1001 B/);
  });

  it("--json: stdout is pure NDJSON, two builds in one program, the program's stdout on stderr", async () => {
    const w = watch(['two', '5'], ['--json', '--no-studio']);
    expect(await w.done).toBe(5);
    const evs = events(w.out());
    const started = evs.filter((e) => e.type === 'build.started');
    expect(started).toHaveLength(2);
    for (const s of started) {
      if (s.type !== 'build.started') continue;
      expect(s).toMatchObject({ backend: 'tensorrt', backendVersion: '10.16.1', simulated: false, watched: { probe: 'python-hook', api: 'Builder.build_serialized_network' } });
      expect(s.model).toBeUndefined();
    }
    expect(finishes(evs).map((f) => [f.status, f.engineBytes])).toEqual([
      ['succeeded', 1001],
      ['succeeded', 1002],
    ]);
    expect(new Set(evs.map((e) => e.buildId)).size).toBe(2);
    // Per build: seq rises from 0, build.finished last.
    for (const id of new Set(evs.map((e) => e.buildId))) {
      const mine = evs.filter((e) => e.buildId === id);
      expect(mine[0].type).toBe('build.started');
      expect(mine.at(-1)!.type).toBe('build.finished');
      for (let i = 1; i < mine.length; i++) expect(mine[i].seq).toBeGreaterThan(mine[i - 1].seq);
    }
    expect(w.err()).toContain('program got: engine2');
  });

  it('a build in a child process of the program', async () => {
    const w = watch(['child', '7'], ['--json', '--no-studio']);
    expect(await w.done).toBe(7);
    const evs = events(w.out());
    expect(finishes(evs).map((f) => f.status)).toEqual(['succeeded']);
    const s = evs.find((e) => e.type === 'build.started');
    expect(s?.type === 'build.started' && s.watched?.argv.slice(-1)).toEqual(['plain']);
  });

  it('a program that builds nothing ends with one line saying so; TensorRT returning no engine is failed', async () => {
    const none = watch(['none'], ['--json', '--no-studio']);
    expect(await none.done).toBe(0);
    expect(none.out()).toBe('');
    expect(none.err()).toMatch(/built no TensorRT engine/);
    const fail = watch(['fail'], ['--json', '--no-studio']);
    expect(await fail.done).toBe(0);
    expect(finishes(events(fail.out()))).toMatchObject([{ status: 'failed', error: 'TensorRT returned no engine' }]);
  });

  it('Ctrl-C cancels the build at its next step; the program gets the cancel result and goes on', async () => {
    const w = watch(['slow'], ['--json', '--no-studio']);
    await until('a step', () => w.out().includes('"phase.step"'));
    w.child.kill('SIGINT');
    expect(await w.done).toBe(0);
    const evs = events(w.out());
    expect(evs.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'user' });
    expect(finishes(evs)).toMatchObject([{ status: 'cancelled' }]);
    expect(w.err()).toMatch(/probe received cancel (1|\*)/);
    expect(w.err()).toContain('program got: None');
  });

  it('a second Ctrl-C reaches the program; its build, still open, is crashed with its phase path', async () => {
    const w = watch(['hang'], ['--json', '--no-studio']);
    await until('the build', () => w.out().includes('"Building engine"') && w.out().includes('"phase.step"'));
    await new Promise((r) => setTimeout(r, 100));
    w.child.kill('SIGINT');
    await until('the cancel', () => w.err().includes('probe received cancel'));
    w.child.kill('SIGINT');
    expect(await w.done).toBe(3);
    expect(w.err()).toContain('program got SIGINT');
    expect(finishes(events(w.out()))).toMatchObject([{ status: 'crashed', lastPhasePath: ['Building engine'] }]);
  });

  it('the program killed mid-build: crashed with the last phase path, exit 128+9', async () => {
    const w = watch(['hang'], ['--json', '--no-studio']);
    await until('the build', () => w.out().includes('"phase.step"'));
    const started = events(w.out().split('\n')[0]);
    const pid = started[0].type === 'build.started' ? started[0].watched!.pid : 0;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    expect(await w.done).toBe(137);
    const [f] = finishes(events(w.out()));
    expect(f).toMatchObject({ status: 'crashed', lastPhasePath: ['Building engine'] });
    expect(f.error).toContain('Building engine');
  });

  it('usage errors are one line and exit 2; a program that cannot start is 127', async () => {
    const a = run(['watch']);
    expect(await a.done).toBe(2);
    expect(a.err()).toContain('trt-build-studio watch: name the program to run');
    const b = run(['watch', '--studio', 'x', '--', 'true']);
    expect(await b.done).toBe(2);
    expect(b.err()).toContain('--studio x: not a URL');
    const c = run(['watch', '--no-studio', '--', path.join(xdg, 'no-such-program')]);
    expect(await c.done).toBe(127);
    expect(c.err()).toContain('cannot run');
  });
});

/** A real `serve` publishing itself in the test's registry; its URL and token. */
async function startServe(): Promise<{ r: Running; url: string; token: string }> {
  const token = 'watch-test-token';
  const r = run(['serve', '--port', '0', '--token', token]);
  await until('serve to publish itself', () => /watched builds: probe socket/.test(r.err()), 30_000);
  const url = new URL(r.out().trim().split('\n')[0]).origin;
  return { r, url, token };
}

async function api<T>(s: { url: string; token: string }, p: string, method = 'GET'): Promise<T> {
  const res = await fetch(`${s.url}${p}`, { method, headers: { authorization: `Bearer ${s.token}` } });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function watchedIn(s: { url: string; token: string }): Promise<BuildRecord[]> {
  const list = await api<BuildRecord[] | { builds: BuildRecord[] }>(s, '/api/builds');
  return (Array.isArray(list) ? list : list.builds).filter((b) => b.watched);
}

/** The studio's watched builds once `pred` holds for them. */
async function listedWhen(s: { url: string; token: string }, what: string, pred: (l: BuildRecord[]) => boolean): Promise<BuildRecord[]> {
  const end = Date.now() + 20_000;
  for (;;) {
    const l = await watchedIn(s);
    if (pred(l)) return l;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(l.map((b) => b.state))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('watch with a studio', () => {
  it('the build appears in the studio, labelled; Stop there reaches the probe; the studio unpublishes on exit', async () => {
    const s = await startServe();
    try {
      const files = fs.readdirSync(path.join(xdg, 'trt-build-studio'));
      expect(files.some((f) => /^studio-\d+\.json$/.test(f))).toBe(true);
      const w = watch(['slow'], ['--json']);
      await until('the studio to list the build', () => w.out().includes('"phase.step"'));
      const listed = await listedWhen(s, 'the watched build in GET /api/builds', (listed) => listed.length > 0 && listed[0].state === 'running');
      expect(listed[0].watched).toMatchObject({ probe: 'python-hook', api: 'Builder.build_serialized_network' });
      expect(listed[0].watched!.argv.at(-1)).toBe('slow');
      expect(listed[0].backend).toBe('tensorrt');
      await api(s, `/api/builds/${listed[0].id}/cancel`, 'POST');
      expect(await w.done).toBe(0);
      expect(w.err()).toContain('probe received cancel 1');
      expect(w.err()).toContain('program got: None');
      // watch's own stream says so too: the studio's Stop went through watch's session.
      expect(events(w.out()).find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'user' });
      expect(finishes(events(w.out()))).toMatchObject([{ status: 'cancelled' }]);
      await listedWhen(s, 'the studio to see it end', (listed) => listed[0]?.state === 'cancelled');
    } finally {
      s.r.child.kill('SIGINT');
      await s.r.done;
    }
    expect(fs.readdirSync(path.join(xdg, 'trt-build-studio')).filter((f) => f.startsWith('studio-'))).toEqual([]);
  });

  it('a studio gone mid-build leaves the build alone (shown here); a restarted one gets it again and its Stop works', async () => {
    const a = await startServe();
    const w = watch(['slow'], ['--json']);
    let b: Awaited<ReturnType<typeof startServe>> | undefined;
    try {
      await listedWhen(a, 'the build in studio A', (listed) => listed.length > 0);
      a.r.child.kill('SIGKILL');
      await a.r.done;
      await until('watch to notice', () => w.err().includes('the studio went away'));
      expect(w.child.exitCode).toBeNull(); // the program and its build go on
      const stepsBefore = (w.out().match(/"phase\.step"/g) ?? []).length;
      b = await startServe();
      const sb = b;
      const listed = await listedWhen(sb, 'the build re-sent to studio B', (listed) => listed.length > 0 && listed[0].state === 'running');
      await until('watch to say so', () => w.err().includes('the studio is back'));
      expect((w.out().match(/"phase\.step"/g) ?? []).length).toBeGreaterThan(stepsBefore);
      await api(sb, `/api/builds/${listed[0].id}/cancel`, 'POST');
      expect(await w.done).toBe(0);
      expect(finishes(events(w.out()))).toMatchObject([{ status: 'cancelled' }]);
    } finally {
      w.child.kill('SIGKILL');
      if (b) {
        b.r.child.kill('SIGINT');
        await b.r.done;
      }
    }
  });

  it('a studio that is published but unreachable: the build is watched here all the same', async () => {
    const dir = path.join(xdg, 'trt-build-studio');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // This test process stands in for a studio whose socket does not answer.
    const file = path.join(dir, `studio-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ v: 1, pid: process.pid, url: 'http://127.0.0.1:1', token: 't', probeSocket: path.join(dir, 'nothing.sock'), kind: 'serve' }), {
      mode: 0o600,
    });
    try {
      const w = watch(['plain'], ['--json']);
      expect(await w.done).toBe(0);
      expect(finishes(events(w.out()))).toMatchObject([{ status: 'succeeded' }]);
    } finally {
      fs.rmSync(file);
    }
  });
});

describe('watch and a registry that is not private', () => {
  it('a studio file others can read is refused, said once, and the build is watched here', async () => {
    const dir = path.join(xdg, 'trt-build-studio');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `studio-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ v: 1, pid: process.pid, url: 'http://127.0.0.1:1', token: 't', probeSocket: path.join(dir, 'nothing.sock'), kind: 'serve' }));
    fs.chmodSync(file, 0o644);
    try {
      const w = watch(['plain'], ['--json']);
      expect(await w.done).toBe(0);
      expect(w.err().match(/studio registry: .* is open to other users \(mode 644\)/g)).toHaveLength(1);
      expect(finishes(events(w.out()))).toMatchObject([{ status: 'succeeded' }]);
    } finally {
      fs.rmSync(file);
    }
  });
});

// Through the Python helper's real probe: python/watch_hook/sitecustomize.py (put on PYTHONPATH by
// watch itself) over the stand-in `tensorrt` in test/support/fake-tensorrt (written from the
// documented API, NOT NVIDIA's bindings; real TensorRT cannot be installed here).
describe('watch -- python3 (the real hook, the stand-in tensorrt)', () => {
  const FAKE_TRT = path.join(__dirname, '..', '..', '..', 'test', 'support', 'fake-tensorrt');
  const SCRIPT = `
import tensorrt as trt
b = trt.Builder(); c = b.create_builder_config(); c.set_flag(trt.BuilderFlag.FP16)
n = b.create_network(); n.name = "mnist"
i = n.add_input("x", trt.DataType.FLOAT, (1, 3, 8))
n.mark_output(n.add_identity(i).get_output(0))
r = b.build_serialized_network(n, c)
print("program got", None if r is None else len(r), flush=True)
`;
  function script(): string {
    const f = path.join(xdg, 'build_engine.py');
    fs.writeFileSync(f, SCRIPT);
    return f;
  }

  it('a Python build script, unchanged: its build is a TensorRT build with the network it built, its result untouched', async () => {
    const w = run(['watch', '--json', '--no-studio', '--', 'python3', script()], { PYTHONPATH: FAKE_TRT, FAKE_TRT_SCALE: '0.05' });
    expect(await w.done).toBe(0);
    const evs = events(w.out());
    const s = evs[0];
    expect(s.type === 'build.started' && s).toMatchObject({
      backend: 'tensorrt',
      backendVersion: '10.16.0+standin',
      watched: { probe: 'python-hook', api: 'Builder.build_serialized_network', network: { name: 'mnist' } },
    });
    expect(evs.filter((e) => e.type === 'phase.start').length).toBeGreaterThan(3);
    const [f] = finishes(evs);
    expect(f.status).toBe('succeeded');
    expect(w.err()).toMatch(new RegExp(`program got ${f.engineBytes}`));
  });

  it('Ctrl-C: the script gets None from build_serialized_network and goes on; the build is cancelled', async () => {
    const w = run(['watch', '--json', '--no-studio', '--', 'python3', script()], { PYTHONPATH: FAKE_TRT, FAKE_TRT_STEP_DELAY: '0.002' });
    await until('a step', () => w.out().includes('"phase.step"'));
    w.child.kill('SIGINT');
    expect(await w.done).toBe(0);
    expect(finishes(events(w.out()))).toMatchObject([{ status: 'cancelled' }]);
    expect(w.err()).toContain('program got None');
  });
});

// Through the C++ helper's LD_PRELOAD shim (native/watch) over the fake libnvinfer of
// native/test/watch (our own, not NVIDIA's library), with the sample modelled on NVIDIA's
// sampleProgressMonitor. Those are built by that helper's ctest folder (TBS_WATCH_NATIVE_DIR,
// default build/native-watch); without them this is skipped, saying so.
describe('watch -- a native program (the LD_PRELOAD shim, a fake libnvinfer)', () => {
  const dir = process.env.TBS_WATCH_NATIVE_DIR ?? path.join(__dirname, '..', '..', '..', 'build', 'native-watch');
  const shim = path.join(dir, 'libtbs_watch.so');
  const sample = path.join(dir, 'tbs_watch10_sample');
  const built = fs.existsSync(shim) && fs.existsSync(path.join(dir, 'libtbs_watch10.so')) && fs.existsSync(sample);
  it.skipIf(!built)(`plain and twice, unchanged (needs ${dir}: libtbs_watch.so, libtbs_watch10.so, tbs_watch10_sample)`, async () => {
    const w = run(['watch', '--json', '--no-studio', '--', sample, 'twice'], { TBS_WATCH_SHIM: shim });
    expect(await w.done).toBe(0);
    const evs = events(w.out());
    const s = evs.find((e) => e.type === 'build.started');
    expect(s?.type === 'build.started' && s).toMatchObject({
      backend: 'tensorrt',
      watched: { probe: 'cpp-shim', api: expect.stringMatching(/^IBuilder::buildSerializedNetwork/), network: { name: 'watch-sample', layers: 7 } },
    });
    expect(finishes(evs).map((f) => f.status)).toEqual(['succeeded', 'succeeded']);
    expect(w.err()).toMatch(/result engine \d+/);
  });
});
