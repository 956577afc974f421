// The utilityProcess launcher against a fake UtilityProcess (the real one needs the Electron
// binary, which cannot be had here). What is checked: how messages, exits and kills are mapped
// onto the service's WorkerChannel, and that no worker outlives killAll().
import { EventEmitter } from 'node:events';
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

class FakeUtilityProcess extends EventEmitter {
  pid: number | undefined = 4242;
  posted: unknown[] = [];
  killed = 0;
  stdout = new PassThrough();
  stderr = new PassThrough();
  constructor(
    readonly modulePath: string,
    readonly options: Record<string, unknown>,
  ) {
    super();
  }
  postMessage(m: unknown) {
    if (this.pid === undefined) throw new Error('posted to an exited process (would crash Electron main)');
    this.posted.push(m);
  }
  kill() {
    this.killed++;
    return true;
  }
  exit(code: number) {
    this.pid = undefined;
    this.emit('exit', code);
  }
}

function setup(env?: Record<string, string>) {
  const children: FakeUtilityProcess[] = [];
  const killedPids: number[] = [];
  const refused = new Set<number>();
  const launcher = createUtilityLauncher({
    workerPath: '/app/dist/apps/worker/worker.js',
    env,
    fork: (p, _args, o) => {
      const c = new FakeUtilityProcess(p, o as Record<string, unknown>);
      c.pid = 4242 + children.length;
      children.push(c);
      return c as never;
    },
    killPid: (pid) => {
      if (refused.has(pid)) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      killedPids.push(pid);
      // SIGKILL: the process dies and Electron reports the exit shortly after.
      const c = children.find((x) => x.pid === pid);
      if (!c) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
      setTimeout(() => c.exit(137), 5);
    },
  });
  return { launcher, children, killedPids, refused };
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

  it('passes messages both ways and reports the exit code', () => {
    const { launcher, children } = setup();
    const ch = launcher.launch();
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
    expect(ch.pid).toBeUndefined();
  });

  it('never posts to a worker that has exited (that crashed Electron main: electron#53293)', () => {
    const { launcher, children } = setup();
    const ch = launcher.launch();
    children[0].exit(1);
    expect(() => ch.send({ type: 'cancel', reason: 'shutdown' })).not.toThrow();
    expect(children[0].posted).toEqual([]);
  });

  it('keeps the last stderr/stdout lines for crash reports', async () => {
    const { launcher, children } = setup();
    const ch = launcher.launch();
    children[0].stdout.write('starting\n');
    children[0].stderr.write(`${'x'.repeat(5000)}\nSegmentation fault in tactic 7\n`);
    await new Promise((r) => setImmediate(r));
    const tail = ch.stderrTail?.() ?? '';
    expect(tail.endsWith('Segmentation fault in tactic 7')).toBe(true);
    expect(tail.length).toBeLessThanOrEqual(4096);
  });

  it('kill() sends SIGKILL by pid (UtilityProcess.kill is only SIGTERM) and is a no-op after exit', async () => {
    const { launcher, children, killedPids } = setup();
    const ch = launcher.launch();
    ch.kill();
    expect(killedPids).toEqual([4242]);
    expect(children[0].killed).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    ch.kill();
    expect(killedPids).toEqual([4242]);
  });

  it('falls back to UtilityProcess.kill when the pid cannot be signalled', () => {
    const { launcher, children, refused } = setup();
    const ch = launcher.launch();
    refused.add(4242);
    ch.kill();
    expect(children[0].killed).toBe(1);
  });

  it('killAll() leaves no worker running and resolves once they have exited', async () => {
    const { launcher, children } = setup();
    launcher.launch();
    launcher.launch();
    launcher.launch();
    children[1].exit(0);
    expect(launcher.live).toBe(2);
    await launcher.killAll(1000);
    expect(launcher.live).toBe(0);
    expect(children.map((c) => c.pid)).toEqual([undefined, undefined, undefined]);
  });

  it('killAll() gives up after its timeout when a worker will not die', async () => {
    const { launcher, children } = setup();
    launcher.launch();
    children[0].pid = undefined; // never spawned: no pid to signal, Electron's kill is all we have
    const started = Date.now();
    await launcher.killAll(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(children[0].killed).toBe(1);
  });
});
