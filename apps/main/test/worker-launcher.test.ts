// The utilityProcess launcher against a fake UtilityProcess (the real one needs the Electron
// binary, which cannot be had here). What is checked: how messages, exits and kills are mapped
// onto the service's WorkerChannel, and that no worker outlives killAll().
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => ({
  utilityProcess: {
    fork: () => {
      throw new Error('tests pass their own fork');
    },
  },
}));

const { createUtilityLauncher } = await import('../worker-launcher.js');

// Raw wait statuses, as child-process-gone's exitCode carries them on Linux (and 'exit' does when
// the worker did not end through process.exit, whose plain exit code 'exit' carries instead).
const SIGKILL = 9;
const SIGABRT = 6;
const SIGSEGV = 11;
const exited = (code: number) => code << 8;

/** Behaves as Electron's does: no pid before 'spawn', none after 'exit' has been emitted. */
class FakeUtilityProcess extends EventEmitter {
  pid: number | undefined = undefined;
  posted: unknown[] = [];
  killed = 0;
  stdout = new PassThrough();
  stderr = new PassThrough();
  constructor(
    readonly modulePath: string,
    readonly options: Record<string, unknown>,
    readonly osPid: number,
  ) {
    super();
  }
  spawn() {
    this.pid = this.osPid;
    this.emit('spawn');
  }
  postMessage(m: unknown) {
    if (this.pid === undefined) throw new Error('posted to an exited process (would crash Electron main)');
    this.posted.push(m);
  }
  kill() {
    // Electron: no pid yet (or any more) means nothing to signal.
    if (this.pid === undefined) return false;
    this.killed++;
    return true;
  }
  /** `status` is what Electron's 'exit' carries: an exit code after process.exit, else a wait status. */
  exit(status: number) {
    this.emit('exit', status);
    this.pid = undefined;
  }
}

function setup(env?: Record<string, string>, opts: { app?: EventEmitter; stderrDir?: string } = {}) {
  const children: FakeUtilityProcess[] = [];
  const killedPids: number[] = [];
  const refused = new Set<number>();
  const launcher = createUtilityLauncher({
    workerPath: '/app/dist/apps/worker/worker.js',
    env,
    fork: (p, _args, o) => {
      const c = new FakeUtilityProcess(p, o as Record<string, unknown>, 4242 + children.length);
      children.push(c);
      return c as never;
    },
    killPid: (pid) => {
      if (refused.has(pid)) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      killedPids.push(pid);
      // SIGKILL: the process dies and Electron reports the exit shortly after.
      const c = children.find((x) => x.osPid === pid && x.pid !== undefined);
      if (!c) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
      setTimeout(() => c.exit(SIGKILL), 5);
    },
    app: opts.app as never,
    goneWaitMs: 100,
    stderrDir: opts.stderrDir,
    platform: 'linux',
  });
  /** Launch, then let the fake report 'spawn' as Electron does once the process is up. */
  const start = () => {
    const ch = launcher.launch();
    children.at(-1)!.spawn();
    return ch;
  };
  return { launcher, start, children, killedPids, refused };
}

describe('utilityProcess launcher', () => {
  it('forks the worker entry with piped stdio and the addon path in its environment', () => {
    const { launcher, children } = setup({ TBS_ADDON_PATH: '/opt/app/resources/app.asar.unpacked/build/native/Release/x.node' });
    launcher.launch();
    expect(children[0].modulePath).toBe('/app/dist/apps/worker/worker.js');
    expect(children[0].options.stdio).toBe('pipe');
    const env = children[0].options.env as Record<string, string>;
    expect(env.TBS_ADDON_PATH).toBe('/opt/app/resources/app.asar.unpacked/build/native/Release/x.node');
    // The rest of the environment is inherited (PATH, LD_LIBRARY_PATH for TensorRT, …).
    expect(env.PATH).toBe(process.env.PATH);
  });

  it('asks an env function at each launch (a TensorRT location changed in the app reaches the next worker)', () => {
    const children: Array<{ env: Record<string, string> }> = [];
    let dir = '/opt/trt-a/lib';
    const launcher = createUtilityLauncher({
      workerPath: '/w.js',
      env: () => ({ TBS_TRT_LIB_DIR: dir }),
      fork: (_p, _a, o) => {
        children.push({ env: o.env as Record<string, string> });
        return new FakeUtilityProcess('/w.js', o as Record<string, unknown>, 1) as never;
      },
    });
    launcher.launch();
    dir = '/opt/trt-b/lib';
    launcher.launch();
    expect(children.map((c) => c.env.TBS_TRT_LIB_DIR)).toEqual(['/opt/trt-a/lib', '/opt/trt-b/lib']);
  });

  it('passes messages both ways and reports the exit code', () => {
    const { launcher, start, children } = setup();
    const ch = start();
    expect(ch.pid).toBe(4242);
    const got: unknown[] = [];
    const exits: Array<[number | null, string | null]> = [];
    ch.onMessage((m) => got.push(m));
    ch.onExit((code, signal) => exits.push([code, signal]));
    ch.send({ type: 'cancel', reason: 'user' });
    expect(children[0].posted).toEqual([{ type: 'cancel', reason: 'user' }]);
    children[0].emit('message', { type: 'ready', pid: 4242 });
    expect(got).toEqual([{ type: 'ready', pid: 4242 }]);
    expect(launcher.live).toBe(1);
    children[0].exit(3);
    expect(exits).toEqual([[3, null]]);
    expect(launcher.live).toBe(0);
  });

  it('keeps the pid from spawn after exit, when Electron has cleared its own (the service cleans temp files by it)', () => {
    const { launcher, children } = setup();
    const ch = launcher.launch();
    expect(ch.pid).toBeUndefined();
    children[0].spawn();
    expect(ch.pid).toBe(4242);
    const seen: Array<number | undefined> = [];
    ch.onExit(() => queueMicrotask(() => seen.push(ch.pid)));
    children[0].exit(SIGSEGV | 0x80);
    expect(children[0].pid).toBeUndefined();
    expect(ch.pid).toBe(4242);
    return Promise.resolve().then(() => expect(seen).toEqual([4242]));
  });

  it('a kill() before spawn is carried out once the worker has spawned', () => {
    const { launcher, children, killedPids } = setup();
    const ch = launcher.launch();
    ch.kill();
    expect(killedPids).toEqual([]);
    children[0].spawn();
    expect(killedPids).toEqual([4242]);
  });

  it("names each worker and adds Electron's child-process-gone reason to the crash report", async () => {
    const app = new EventEmitter();
    const { start, children } = setup(undefined, { app });
    const ch = start();
    const other = start();
    const names = children.map((c) => c.options.serviceName);
    expect(new Set(names).size).toBe(2);
    children[0].stderr.write('allocating 80 GiB\n');
    await new Promise((r) => setImmediate(r));
    const exits: Array<string | null> = [];
    ch.onExit((_code, signal) => exits.push(signal));
    // Electron posts 'exit' and 'child-process-gone' separately; the exit waits for the reason.
    children[0].exit(SIGKILL);
    expect(exits).toEqual([]);
    app.emit('child-process-gone', {}, { type: 'Utility', reason: 'oom', exitCode: SIGKILL, serviceName: 'node.mojom.NodeService', name: names[0] });
    expect(exits).toEqual(['SIGKILL']);
    expect(ch.stderrTail!()).toBe('allocating 80 GiB\nthe worker process ran out of memory (Electron: oom, signal SIGKILL)');
    // Another worker's reason, or another process type, is not ours.
    app.emit('child-process-gone', {}, { type: 'GPU', reason: 'crashed', exitCode: 1, name: names[1] });
    expect(other.stderrTail!()).toBe('');
  });

  it('takes a child-process-gone that arrives before the exit too', () => {
    const app = new EventEmitter();
    const { start, children } = setup(undefined, { app });
    const ch = start();
    const exits: Array<string | null> = [];
    ch.onExit((_code, signal) => exits.push(signal));
    app.emit('child-process-gone', {}, { type: 'Utility', reason: 'killed', exitCode: SIGKILL, name: children[0].options.serviceName });
    children[0].exit(SIGKILL);
    expect(exits).toEqual(['SIGKILL']);
    expect(ch.stderrTail!()).toMatch(/^the worker process was killed .*\(Electron: killed, signal SIGKILL\)$/);
  });

  it('an abnormal exit without a child-process-gone is still reported, after a short wait; a clean exit at once', async () => {
    const app = new EventEmitter();
    const { start, children } = setup(undefined, { app });
    const crashed = start();
    const clean = start();
    const exits: string[] = [];
    crashed.onExit((code, signal) => exits.push(`crashed ${signal ?? code}`));
    clean.onExit((code, signal) => exits.push(`clean ${signal ?? code}`));
    // Without Electron's account, a number above 255 can only be a wait status (a native _exit(6)).
    children[0].exit(exited(6));
    children[1].exit(0);
    expect(exits).toEqual(['clean 0']);
    await vi.waitFor(() => expect(exits).toEqual(['clean 0', 'crashed 6']));
    expect(crashed.stderrTail!()).toBe('');
  });

  it('never posts to a worker that has exited (that crashed Electron main: electron#53293)', () => {
    const { start, children } = setup();
    const ch = start();
    children[0].exit(exited(1));
    expect(() => ch.send({ type: 'cancel', reason: 'shutdown' })).not.toThrow();
    expect(children[0].posted).toEqual([]);
  });

  it('keeps the last stderr/stdout lines for crash reports', async () => {
    const { start, children } = setup();
    const ch = start();
    children[0].stdout.write('starting\n');
    children[0].stderr.write(`${'x'.repeat(5000)}\nSegmentation fault in tactic 7\n`);
    await new Promise((r) => setImmediate(r));
    const tail = ch.stderrTail?.() ?? '';
    expect(tail.endsWith('Segmentation fault in tactic 7')).toBe(true);
    expect(tail.length).toBeLessThanOrEqual(4096);
  });

  it('kill() sends SIGKILL by pid (UtilityProcess.kill is only SIGTERM) and is a no-op after exit', async () => {
    const { start, children, killedPids } = setup();
    const ch = start();
    ch.kill();
    expect(killedPids).toEqual([4242]);
    expect(children[0].killed).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    ch.kill();
    expect(killedPids).toEqual([4242]);
  });

  it('falls back to UtilityProcess.kill when the pid cannot be signalled', () => {
    const { start, children, refused } = setup();
    const ch = start();
    refused.add(4242);
    ch.kill();
    expect(children[0].killed).toBe(1);
  });

  it('killAll() leaves no worker running and resolves once they have exited', async () => {
    const { launcher, start, children } = setup();
    start();
    start();
    start();
    children[1].exit(exited(0));
    expect(launcher.live).toBe(2);
    await launcher.killAll(1000);
    expect(launcher.live).toBe(0);
    expect(children.map((c) => c.pid)).toEqual([undefined, undefined, undefined]);
  });

  it('killAll() gives up after its timeout when a worker will not die, and kills it if it spawns later', async () => {
    const { launcher, children, killedPids } = setup();
    launcher.launch(); // not spawned yet: no pid to signal
    const started = Date.now();
    await launcher.killAll(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    children[0].spawn();
    expect(killedPids).toEqual([4242]);
    await vi.waitFor(() => expect(launcher.live).toBe(0));
  });

  it("decodes an end as Electron reports it: 'exit' has process.exit's code, child-process-gone a wait status", () => {
    const app = new EventEmitter();
    const { start, children } = setup(undefined, { app });
    // [what 'exit' carries, child-process-gone (null: none, as after exit(0)), what the service gets]
    const cases: Array<[number, { reason: string; exitCode: number } | null, [number | null, string | null]]> = [
      [1, { reason: 'abnormal-exit', exitCode: exited(1) }, [1, null]], // process.exit(1): not "signal SIGHUP"
      [70, { reason: 'abnormal-exit', exitCode: exited(70) }, [70, null]], // not "signal signal 70"
      [0, null, [0, null]],
      [SIGSEGV, { reason: 'crashed', exitCode: SIGSEGV }, [null, 'SIGSEGV']],
      [SIGSEGV | 0x80, { reason: 'crashed', exitCode: SIGSEGV | 0x80 }, [null, 'SIGSEGV']],
      [SIGKILL, { reason: 'killed', exitCode: SIGKILL }, [null, 'SIGKILL']],
    ];
    const got: Array<[number | null, string | null]> = [];
    cases.forEach(([status, gone], i) => {
      const ch = start();
      ch.onExit((code, signal) => got.push([code, signal]));
      if (gone) app.emit('child-process-gone', {}, { type: 'Utility', ...gone, name: children[i].options.serviceName });
      children[i].exit(status);
    });
    expect(got).toEqual(cases.map((c) => c[2]));
    // The crash report's words follow the same decoding.
    expect(children.length).toBe(cases.length);
  });

  it('an exit code without child-process-gone stays an exit code (exit(1) never reads "signal SIGHUP")', async () => {
    const { start, children } = setup();
    const ch = start();
    const exits: Array<[number | null, string | null]> = [];
    ch.onExit((code, signal) => exits.push([code, signal]));
    children[0].exit(1);
    expect(exits).toEqual([[1, null]]);
  });

  it("quotes a dying worker's last stderr lines from its file, which Electron's dropped pipe listeners never deliver", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-stderr-files-'));
    try {
      const app = new EventEmitter();
      const { start, children } = setup(undefined, { app, stderrDir: path.join(dir, 'logs') });
      const ch = start();
      const file = (children[0].options.env as Record<string, string>).TBS_WORKER_STDERR_FILE;
      expect(path.dirname(file)).toBe(path.join(dir, 'logs'));
      expect(fs.statSync(path.join(dir, 'logs')).mode & 0o777).toBe(0o700);
      // What the worker's native code writes on fd 2 after the redirect, right before it dies.
      fs.writeFileSync(file, "terminate called after throwing an instance of 'std::bad_alloc'\n");
      const exits: Array<string | null> = [];
      ch.onExit((_c, signal) => exits.push(signal));
      app.emit('child-process-gone', {}, { type: 'Utility', reason: 'crashed', exitCode: SIGABRT, name: children[0].options.serviceName });
      children[0].exit(SIGABRT);
      expect(exits).toEqual(['SIGABRT']);
      expect(ch.stderrTail!()).toContain("terminate called after throwing an instance of 'std::bad_alloc'");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps only the newest worker stderr files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-stderr-files-'));
    try {
      const { start, children } = setup(undefined, { stderrDir: dir });
      for (let i = 0; i < 25; i++) {
        start();
        fs.writeFileSync((children[i].options.env as Record<string, string>).TBS_WORKER_STDERR_FILE, `worker ${i}\n`);
        children[i].exit(exited(0));
      }
      const left = fs.readdirSync(dir);
      expect(left.length).toBe(20);
      expect(left.some((f) => fs.readFileSync(path.join(dir, f), 'utf8') === 'worker 24\n')).toBe(true);
      expect(left.some((f) => fs.readFileSync(path.join(dir, f), 'utf8') === 'worker 0\n')).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
