// `trt-build-studio build` as users run it: real CLI process, real worker process, real signals.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { CLI_BIN, collect, killLiveClis, parseNdjson, processesMarked, ProcessMarks, runCli, spawnCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
let trtAvailable = false;

beforeAll(async () => {
  dir = tempDir('tbs-cli-build-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  const r = await runCli(['backends', '--json']);
  expect(r.code).toBe(0);
  trtAvailable = JSON.parse(r.stdout).some((b: { name: string; available: boolean }) => b.name === 'tensorrt' && b.available);
});
/** Marks handed out by the running test: whatever carries one is killed after it, pass or fail. */
const marks = new ProcessMarks();
afterEach(() => {
  killLiveClis();
  marks.killAll();
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const SIM = ['--backend', 'simulated', '--sim-duration', '0.4', '--sim-seed', '5'];

/** Spawns a --json build and resolves once `pred` matched an event on stdout. */
function jsonBuild(args: string[], env: Record<string, string> = {}) {
  const child = spawnCli(['build', ...args, '--json'], { env: { ...process.env, ...env } });
  const done = collect(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  let buf = '';
  const events: BuildEvent[] = [];
  child.stdout!.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      events.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  const until = (pred: (e: BuildEvent) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (events.some(pred)) {
          clearInterval(t);
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(t);
          reject(new Error(`build ended (exit ${child.exitCode}) before the expected event: ${JSON.stringify(events.slice(-3))} ${stderr}`));
        }
      }, 10);
    });
  return { child, done, until, events };
}

describe('build --json', () => {
  it('prints exactly the protocol events, valid and in order, ending with build.finished', async () => {
    const out = path.join(dir, 'json.engine');
    const r = await runCli(['build', model, '-o', out, ...SIM, '--json']);
    expect(r.code).toBe(0);
    const events = assertEventStream(parseNdjson(r.stdout));
    const first = events[0];
    const last = events[events.length - 1] as BuildFinished;
    expect(first).toMatchObject({ type: 'build.started', backend: 'simulated', simulated: true, outputPath: out });
    expect(last).toMatchObject({ type: 'build.finished', status: 'succeeded', outputPath: out });
    expect(fs.statSync(out).size).toBe(last.engineBytes);
    expect(events.filter((e) => e.type === 'phase.start').length).toBeGreaterThan(10);
  });

  it('auto picks TensorRT when present, else the simulated backend, and says so', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'auto.engine'), '--sim-duration', '0.2', '--json']);
    expect(r.code).toBe(0);
    const started = parseNdjson(r.stdout)[0] as BuildEvent;
    expect(started).toMatchObject({ type: 'build.started', backend: trtAvailable ? 'tensorrt' : 'simulated' });
  });

  it('builds a dynamic model with trtexec-style shapes, at paths with spaces and non-ASCII', async () => {
    const sub = path.join(dir, 'Modèles ü 模型');
    fs.mkdirSync(sub);
    const dyn = writeModel(path.join(sub, 'dyn model.onnx'), { dynamic: true });
    const out = path.join(sub, 'my engine é.engine');
    const r = await runCli(['build', dyn, '-o', out, ...SIM, '--json', '--shapes', 'input:1x3x224x224/4x3x320x320/8x3x640x640']);
    expect(r.code).toBe(0);
    expect(fs.existsSync(out)).toBe(true);
    const started = parseNdjson(r.stdout)[0] as Extract<BuildEvent, { type: 'build.started' }>;
    expect(started.options?.shapes).toEqual({ input: { min: [1, 3, 224, 224], opt: [4, 3, 320, 320], max: [8, 3, 640, 640] } });
  });
});

describe('build output on a pipe and on a terminal', () => {
  it('prints plain lines without escape codes when stdout is not a terminal', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'plain.engine'), ...SIM]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/\x1b/);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Backend: simulated .*SIMULATED/);
    expect(r.stdout).toMatch(/▸ Building engine \(\d+ steps\)/);
    // The outcome, then the memory summary (peaks per phase) as the closing lines.
    expect(lines.find((l) => l.startsWith('Succeeded in '))).toMatch(/^Succeeded in .* → .*plain\.engine$/);
    expect(lines[lines.length - 1]).toMatch(/^Memory: peak /);
  });

  it('draws a live tree on a terminal', async () => {
    const hasScript = spawnSync('script', ['--version']).status === 0;
    if (!hasScript) return expect.soft(hasScript, 'util-linux `script` is needed to give the CLI a terminal').toBe(true);
    const out = path.join(dir, 'tty.engine');
    const cmd = `stty cols 120 rows 40; ${process.execPath} ${CLI_BIN} build ${model} -o ${out} ${SIM.join(' ')} --sim-duration 1`;
    const log = path.join(dir, 'tty.log');
    execFileSync('script', ['-qec', cmd, log], { stdio: 'ignore', timeout: 30_000 });
    const text = fs.readFileSync(log, 'utf8');
    expect(text).toMatch(/TRT Build Studio · simulated .*SIMULATED/);
    expect(text).toMatch(/\x1b\[\d+A/); // redrawn in place
    expect(text).toMatch(/last \(simulated\) TensorRT callback .* ago/);
    expect(text).toMatch(/✓ Building engine\s+\d+\/\d+/);
    expect(text).toMatch(/Succeeded in/);
    expect(fs.existsSync(out)).toBe(true);
  });
});

describe('stopping a build on a terminal', () => {
  it('Ctrl-C shows "stopping…" in the live view, then the cancel summary (exit 130)', async () => {
    const hasScript = spawnSync('script', ['--version']).status === 0;
    if (!hasScript) return expect.soft(hasScript, 'util-linux `script` is needed to give the CLI a terminal').toBe(true);
    const out = path.join(dir, 'tty-cancel.engine');
    const mark = marks.next();
    const cmd = `stty cols 120 rows 40; exec ${process.execPath} ${CLI_BIN} build ${model} -o ${out} ${SIM.join(' ')} --sim-duration 30`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, [mark]: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let text = '';
    child.stdout!.on('data', (d) => (text += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    while (!/▸ Building engine/.test(text)) {
      if (child.exitCode !== null) throw new Error(`CLI ended early: ${text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // The CLI inside the terminal (not `script` itself) gets the SIGINT, as Ctrl-C would deliver it.
    const cli = processesMarked(mark).filter((pid) => {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv[0] === process.execPath && argv[1] === CLI_BIN;
    });
    expect(cli).toHaveLength(1);
    process.kill(cli[0], 'SIGINT');
    expect(await exited).toBe(130);
    expect(text).toMatch(/stopping… .*\(Ctrl-C again to kill\)/);
    expect(text).toMatch(/Cancelled after .*no output written/);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('stopping a build', () => {
  it('SIGINT cancels at the next step: exit 130, no output, cancel latency within the hang bound', async () => {
    const out = path.join(dir, 'sigint.engine');
    const mark = marks.next();
    const b = jsonBuild([model, '-o', out, ...SIM, '--sim-duration', '3', '--sim-fault', 'hang@Cloning network graph'], { [mark]: '1' });
    await b.until((e) => e.type === 'phase.start' && e.name === 'Cloning network graph');
    // Inside the injected hang by now: it blocks a step for 60 s unless the build is cancelled.
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    b.child.kill('SIGINT');
    const r = await b.done;
    const stopMs = Date.now() - t0;
    expect(r.code).toBe(130);
    const events = assertEventStream(parseNdjson(r.stdout));
    const fin = events[events.length - 1] as BuildFinished;
    expect(fin.status).toBe('cancelled');
    expect(events.some((e) => e.type === 'build.cancelling' && e.reason === 'user')).toBe(true);
    const cloning = events.find((e) => e.type === 'phase.start' && e.name === 'Cloning network graph');
    expect(events.find((e) => e.type === 'phase.finish' && e.id === (cloning as { id: number }).id)).toMatchObject({ early: true });
    expect(fin.cancelLatencyMs).toBeDefined();
    expect(fin.cancelLatencyMs!).toBeLessThan(1000);
    expect(stopMs).toBeLessThan(5000);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('sigint.engine'))).toEqual([]);
    expect(r.stderr).toMatch(/SIGINT: stopping the build/);
    expect(processesMarked(mark)).toEqual([]);
  });

  it('SIGTERM cancels too; a second signal kills the worker; nothing is left behind', async () => {
    const out = path.join(dir, 'sigterm.engine');
    const mark = marks.next();
    const b = jsonBuild([model, '-o', out, ...SIM, '--sim-duration', '20'], { [mark]: '1' });
    await b.until((e) => e.type === 'phase.start');
    // A cancel is honoured within a millisecond; a stopped worker cannot honour it, so the second
    // signal surely meets a build that is still running.
    for (const pid of processesMarked(mark).filter((p) => p !== b.child.pid)) process.kill(pid, 'SIGSTOP');
    let stderr = '';
    b.child.stderr!.on('data', (d) => (stderr += d));
    b.child.kill('SIGTERM');
    // Pending signals are delivered lowest number first, so wait for the first to be handled.
    while (!stderr.includes('stopping')) await new Promise((r) => setTimeout(r, 5));
    b.child.kill('SIGINT');
    const r = await b.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/SIGTERM: stopping/);
    expect(r.stderr).toMatch(/SIGINT: killing the build worker/);
    const events = parseNdjson(r.stdout) as BuildEvent[];
    expect(events[events.length - 1]).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(fs.existsSync(out)).toBe(false);
    expect(processesMarked(mark)).toEqual([]);
  });

  it('a worker whose CLI is killed outright stops its build and exits (no orphan)', async () => {
    const out = path.join(dir, 'orphan.engine');
    const mark = marks.next();
    const b = jsonBuild([model, '-o', out, ...SIM, '--sim-duration', '30'], { [mark]: '1' });
    await b.until((e) => e.type === 'phase.start');
    expect(processesMarked(mark).length).toBeGreaterThanOrEqual(2); // the CLI and its worker
    b.child.kill('SIGKILL');
    await b.done;
    const t0 = Date.now();
    while (processesMarked(mark).length > 0 && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 100));
    expect(processesMarked(mark)).toEqual([]);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('--time-budget cancels with reason timeout (exit 130)', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'budget.engine'), ...SIM, '--sim-duration', '20', '--time-budget', '1', '--json']);
    expect(r.code).toBe(130);
    const events = parseNdjson(r.stdout) as BuildEvent[];
    expect(events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'timeout' });
  });
});

describe('failing builds', () => {
  it('a crashing worker: status crashed, exit 1, no output', async () => {
    const out = path.join(dir, 'crash.engine');
    const r = await runCli(['build', model, '-o', out, ...SIM, '--sim-fault', 'crash', '--json']);
    expect(r.code).toBe(1);
    const events = assertEventStream(parseNdjson(r.stdout), { allowOpenPhases: true });
    const fin = events[events.length - 1] as BuildFinished;
    expect(fin.status).toBe('crashed');
    expect(fin.error).toMatch(/signal SIG/);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('crash.engine'))).toEqual([]);
  });

  it('a failing build exits 1 and keeps a previous file at the output path intact', async () => {
    const out = path.join(dir, 'keep.engine');
    fs.writeFileSync(out, 'previous engine');
    const r = await runCli(['build', model, '-o', out, ...SIM, '--sim-fault', 'fail']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Failed after .*: .+/m);
    expect(fs.readFileSync(out, 'utf8')).toBe('previous engine');
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('keep.engine.tmp'))).toEqual([]);
  });

  it('a corrupt timing cache gives a warning and the build succeeds', async () => {
    const cache = path.join(dir, 'bad.cache');
    // A simulated cache's header with damaged content: corrupt, not "some other file".
    fs.writeFileSync(cache, Buffer.concat([Buffer.from('TBSSIMTC'), crypto.randomBytes(300)]));
    const r = await runCli(['build', model, '-o', path.join(dir, 'cache.engine'), ...SIM, '--timing-cache', cache]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/warning.*(cache|timing)/i);
    expect(r.stdout).toMatch(/Timing cache .*entries before/);
  });
});
