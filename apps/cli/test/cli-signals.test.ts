// `build` under signals at every moment of its life: real CLI process (bin → dist), real worker,
// real signals, real files. Whatever the moment, the command ends with its documented exit code
// (never killed by the signal once its code runs), no worker outlives it, and the output folder
// holds either the complete engine or nothing (no temp file).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { noBuildFinished } from '../commands/build.js';
import { spawn } from 'node:child_process';
import {
  collect,
  killLiveClis,
  launcherStarted,
  leftoverMarked,
  parseNdjson,
  processesMarked,
  ProcessMarks,
  REPO_ROOT,
  spawnCli,
  spawnLauncher,
} from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { signalStorm, until } from '../../../test/support/signal-storm.js';

let dir: string;
let model: string;
const marks = new ProcessMarks();

beforeAll(() => {
  dir = tempDir('tbs-cli-signals-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(() => {
  killLiveClis();
  marks.killAll();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-seed', '5'];

/**
 * A build --json into its own output folder, its processes marked, its stdout parsed as it comes.
 * `launcher`: started as users start it, through the native launcher (build/native/trt-build-studio).
 */
function start(name: string, args: string[], launcher = false) {
  const outDir = fs.mkdtempSync(path.join(dir, `${name}-`));
  const out = path.join(outDir, 'model.engine');
  const mark = marks.next();
  const spawnIt = launcher ? spawnLauncher : spawnCli;
  const child = spawnIt(['build', model, '-o', out, ...SIM, ...args, '--json'], { env: { ...process.env, [mark]: '1' } });
  const done = collect(child);
  const lines: string[] = [];
  const onLine: ((e: BuildEvent) => void)[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      lines.push(line);
      buf = buf.slice(nl + 1);
      for (const f of onLine) f(JSON.parse(line) as BuildEvent);
    }
  });
  const seen = (pred: (e: BuildEvent) => boolean) => lines.some((l) => pred(JSON.parse(l)));
  /** Calls `f` synchronously as the first line matching `pred` is read, not at a later poll. */
  const atLine = (pred: (e: BuildEvent) => boolean, f: () => void) => {
    let fired = false;
    onLine.push((e) => {
      if (!fired && pred(e)) {
        fired = true;
        f();
      }
    });
  };
  return { child, done, out, outDir, mark, seen, atLine };
}

/** The output folder holds the complete engine of a succeeded build, or nothing at all. */
/** A succeeded build's files: the engine, its layer information and its manifest (written after it, docs/engines.md). */
function engineAndSidecars(out: string): string[] {
  const name = path.basename(out);
  return [name, `${name}.layers.json`, `${name}.manifest.json`];
}

function expectWholeOrNothing(outDir: string, out: string, finished: BuildFinished | undefined): void {
  if (finished?.status === 'succeeded') {
    expect(fs.readdirSync(outDir).sort()).toEqual(engineAndSidecars(out));
    expect(fs.statSync(out).size).toBe(finished.engineBytes);
    expect(fs.readFileSync(out, 'latin1').slice(0, 40)).toMatch(/^TRT-BUILD-STUDIO SIMULATED ENGINE/);
  } else {
    expect(fs.readdirSync(outDir)).toEqual([]);
  }
}

describe('build: a signal once the build is over', () => {
  it("while a stalled reader is still owed output: exits at once with the build's code (0), not by the signal", async () => {
    const b = start('stalled', ['--sim-duration', '1']);
    // Not reading: the pipe fills and the command waits to hand over the rest (> 64 KiB).
    b.child.stdout!.pause();
    // The build is over once its engine is in place and its worker has gone; the command waits on.
    await until("the engine and the worker's exit", () => fs.existsSync(b.out) && processesMarked(b.mark).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.child.exitCode, 'still flushing to the stalled reader').toBeNull();
    const t0 = Date.now();
    b.child.kill('SIGINT');
    b.child.stdout!.resume();
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(fs.readdirSync(b.outDir).sort()).toEqual(engineAndSidecars(b.out));
    expect(await leftoverMarked(b.mark)).toEqual([]);
  }, 60_000);

  it('a storm of SIGINT/SIGTERM from the moment build.finished is printed: exit 0, never by a signal', async () => {
    // The command exits right after printing build.finished (that is correct), so the storm starts
    // from the line's arrival itself, its first signal sent synchronously. Even so, on a busy
    // machine the command may have exited and been reaped before its last line is read: such a
    // run signals nothing, proves nothing about this window, and is not counted (its ending is
    // still checked). Three runs that did take signals are required, out of at most ten.
    let signalled = 0;
    for (let i = 0; i < 10 && signalled < 3; i++) {
      const b = start(`after-${i}`, ['--sim-duration', '0.3']);
      let sent = () => 0;
      b.atLine(
        (e) => e.type === 'build.finished',
        () => (sent = signalStorm(b.child, ['SIGINT', 'SIGTERM'])),
      );
      const r = await b.done;
      expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 0, signal: null });
      if (sent() > 0) signalled++;
      const events = assertEventStream(parseNdjson(r.stdout));
      const fin = events.at(-1) as BuildFinished;
      expect(fin).toMatchObject({ type: 'build.finished', status: 'succeeded' });
      expectWholeOrNothing(b.outDir, b.out, fin);
      expect(await leftoverMarked(b.mark)).toEqual([]);
    }
    expect(signalled).toBe(3);
  }, 180_000);
});

describe('build: a storm of signals while it runs', () => {
  it('from the first phase: cancelled (130), the stream ends with build.finished, no worker, no file', async () => {
    const b = start('running', ['--sim-duration', '20']);
    await until('the first phase', () => b.seen((e) => e.type === 'phase.start'));
    expect(processesMarked(b.mark).filter((p) => p !== b.child.pid).length).toBeGreaterThan(0);
    const sent = signalStorm(b.child, ['SIGTERM', 'SIGINT']);
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
    expect(sent()).toBeGreaterThan(0);
    // The worker usually unwinds at the first signal; on a busy machine the second one may kill
    // it first, and a killed worker leaves its phases open.
    const events = assertEventStream(parseNdjson(r.stdout), { allowOpenPhases: true });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expectWholeOrNothing(b.outDir, b.out, undefined);
    expect(await leftoverMarked(b.mark)).toEqual([]);
  }, 60_000);

  it('with a worker that cannot answer the cancel: the second signal kills it, 130, the stream still ends', async () => {
    const b = start('stuck', ['--sim-duration', '20']);
    await until('the first phase', () => b.seen((e) => e.type === 'phase.start'));
    const workers = processesMarked(b.mark).filter((p) => p !== b.child.pid);
    expect(workers.length).toBeGreaterThan(0);
    // A stopped process reads no cancel; only SIGKILL (the second request) ends it.
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    signalStorm(b.child, ['SIGTERM', 'SIGINT']);
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
    // Pending signals are delivered lowest number first: either may come first.
    expect(r.stderr).toMatch(/SIG(INT|TERM): stopping the build/);
    expect(r.stderr).toMatch(/SIG(INT|TERM): killing the build worker/);
    const events = assertEventStream(parseNdjson(r.stdout), { allowOpenPhases: true });
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled', error: expect.stringMatching(/killed .* after cancel \(second cancel\)/) });
    expectWholeOrNothing(b.outDir, b.out, undefined);
    expect(await leftoverMarked(b.mark)).toEqual([]);
  }, 60_000);

  it('from the moment the engine is being written: the whole engine (0) or none (130), never a temp file', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const b = start(`writing-${i}`, ['--sim-duration', '0.4']);
      // The engine is written right after the top "Building engine" phase finishes.
      let building = -1;
      await until('the end of "Building engine"', () =>
        b.seen((e) => {
          if (e.type === 'phase.start' && e.name === 'Building engine' && e.parentId === null) building = e.id;
          return e.type === 'phase.finish' && e.id === building;
        }),
      );
      signalStorm(b.child, i % 2 ? ['SIGINT'] : ['SIGTERM', 'SIGINT'], 1 + i);
      const r = await b.done;
      expect(r.signal, r.stderr).toBeNull();
      const events = assertEventStream(parseNdjson(r.stdout));
      const fin = events.at(-1) as BuildFinished;
      expect(r.code).toBe(fin.status === 'succeeded' ? 0 : 130);
      expectWholeOrNothing(b.outDir, b.out, fin);
      expect(await leftoverMarked(b.mark)).toEqual([]);
      outcomes.push(fin.status);
    }
    // Both endings are correct here; which one came depends on where the storm landed.
    expect(outcomes.every((s) => s === 'succeeded' || s === 'cancelled')).toBe(true);
  }, 120_000);
});

describe('build: a storm of signals from the start', () => {
  it('never leaves a worker or a file; exits 130 whatever moment it began', async () => {
    // Through the launcher, as users run the command: the storm begins during Node's start, the
    // module loading, the backends query (a worker of its own), the model reading and the build's
    // first moments. Each signal, sent to the launcher's pid, is forwarded to Node once.
    for (const delayMs of [0, 40, 80, 150, 250, 400, 700, 1000]) {
      const b = start(`spawn-${delayMs}`, ['--sim-duration', '5'], true);
      await launcherStarted(b.child);
      await new Promise((r) => setTimeout(r, delayMs));
      signalStorm(b.child, ['SIGINT', 'SIGTERM'], 2);
      const r = await b.done;
      expect(await leftoverMarked(b.mark)).toEqual([]);
      expectWholeOrNothing(b.outDir, b.out, undefined);
      expect({ code: r.code, signal: r.signal }, `${delayMs} ms: ${r.stderr}`).toEqual({ code: 130, signal: null });
      const events = parseNdjson(r.stdout) as BuildEvent[];
      expect(events.at(-1), `${delayMs} ms: ${r.stdout}`).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    }
  }, 120_000);
});

describe('build --json: two signals while its modules still load', () => {
  it('ends stdout with the no-build build.finished line and exits 130', async () => {
    // The moment the sweep above hits only sometimes (it failed once in a CI run at 150 ms):
    // both signals are kept by the entry point's handlers and handed to the command inside its
    // listen(), which used to come before the command knew it was --json (no line was written).
    // Here the process signals itself, waits until both are kept, and only then runs the command.
    const dist = (f: string) => JSON.stringify(path.join(REPO_ROOT, 'dist', 'apps', f));
    const script = `
      const hub = require(${dist('process/process-signals.js')}).processSignals();
      process.kill(process.pid, 'SIGINT');
      process.kill(process.pid, 'SIGTERM');
      const go = () => (hub.count < 2 ? setImmediate(go) : require(${dist('cli/main.js')}).main(${JSON.stringify(['build', model, '-o', path.join(dir, 'early.engine'), ...SIM, '--json'])}));
      go();`;
    const r = await collect(spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }));
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const fin = JSON.parse(lines[0]) as BuildFinished;
    expect(lines[0]).toBe(JSON.stringify(noBuildFinished(fin.durationMs)));
    expect(fs.existsSync(path.join(dir, 'early.engine'))).toBe(false);
  }, 30_000);
});

describe('build --json: one Ctrl-C at any moment of its first second', () => {
  it('ends stdout with build.finished and exits 130 (sweep of 10 delays from 0 to 1000 ms after the start)', async () => {
    // Through the native launcher, the command users run: it blocks the signals on its first line
    // and starts Node, which resets every signal's disposition when it starts, so a signal during
    // Node's start-up kills Node the default way; the launcher then prints the build.finished that
    // stands for no build and exits 130 itself. Every delay must end the same way. The delay is
    // counted from the launcher's main (launcherStarted): before it, during the exec itself,
    // nothing of the product runs yet.
    for (let i = 0; i < 10; i++) {
      const delayMs = Math.round((i * 1000) / 9);
      const b = start(`ctrl-c-${delayMs}`, ['--sim-duration', '5'], true);
      await launcherStarted(b.child);
      await new Promise((r) => setTimeout(r, delayMs));
      b.child.kill('SIGINT');
      const r = await b.done;
      expect(await leftoverMarked(b.mark)).toEqual([]);
      expectWholeOrNothing(b.outDir, b.out, undefined);
      expect({ code: r.code, signal: r.signal }, `${delayMs} ms: ${r.stderr}`).toEqual({ code: 130, signal: null });
      const events = parseNdjson(r.stdout) as BuildEvent[];
      expect(events.at(-1), `stdout at ${delayMs} ms: ${r.stdout}`).toMatchObject({ type: 'build.finished', status: 'cancelled' });
      if (events.length > 1) assertEventStream(events);
      // One signal, forwarded once: a clean cancel, never the second-signal path.
      expect(r.stderr).not.toMatch(/killing the build worker/);
    }
  }, 240_000);

  it('a second Ctrl-C before the build has an id: exit 130 at once, stdout ends with a build.finished that stands for no build', async () => {
    const b = start('no-build-yet', ['--sim-duration', '5']);
    // The command queries the backends (a worker of its own) before it starts the build: once
    // that worker exists, the handlers are in and no build id exists yet.
    await until('the backends query worker', () => processesMarked(b.mark).length >= 2);
    b.child.kill('SIGINT');
    b.child.kill('SIGINT');
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 130, signal: null });
    const events = parseNdjson(r.stdout) as BuildEvent[];
    const last = events.at(-1) as BuildFinished;
    expect(last).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    // Usually no build exists yet: then it is the only line, with the documented placeholder id.
    if (last.buildId === '')
      expect(events).toEqual([{ v: 1, buildId: '', seq: 0, t: expect.any(Number), type: 'build.finished', status: 'cancelled', durationMs: expect.any(Number) }]);
    expect(await leftoverMarked(b.mark)).toEqual([]);
    expectWholeOrNothing(b.outDir, b.out, undefined);
  }, 60_000);
});
