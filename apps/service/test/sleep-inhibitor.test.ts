// The inhibitor against a stand-in systemd-inhibit (a script on disk that records its arguments
// and, like the real one, runs its command: here `cat` on our pipe) — a real logind is not
// available in tests.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { inhibitWhileWorkersRun, SleepInhibitor } from '../sleep-inhibitor.js';
import type { WorkerChannel } from '../worker-host.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-inhibit-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const record = path.join(dir, 'args');
const pidFile = path.join(dir, 'pid');
const fake = path.join(dir, 'systemd-inhibit');
fs.writeFileSync(fake, `#!/bin/sh\necho $$ > '${pidFile}'\nprintf '%s\\n' "$@" > '${record}'\nexec cat\n`, { mode: 0o755 });

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('sleep inhibitor for headless builds', () => {
  it('holds a sleep and idle block while builds run and lets go when none is left', async () => {
    const inhibitor = new SleepInhibitor({ command: fake });
    inhibitor.set(true);
    inhibitor.set(true);
    await vi.waitFor(() => expect(fs.existsSync(record)).toBe(true));
    expect(fs.readFileSync(record, 'utf8').split('\n')).toEqual(expect.arrayContaining(['--what=sleep:idle', '--mode=block', 'cat']));
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    inhibitor.set(false);
    await vi.waitFor(() => expect(alive(pid)).toBe(false));
    expect(inhibitor.holding).toBe(false);
  });

  it('says once that it cannot, where systemd-inhibit is missing, and never fails a build', async () => {
    const logs: string[] = [];
    const inhibitor = new SleepInhibitor({ command: path.join(dir, 'no-such-program'), log: (m) => logs.push(m) });
    inhibitor.set(true);
    await vi.waitFor(() => expect(logs).toHaveLength(1));
    inhibitor.set(false);
    inhibitor.set(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/not keeping the machine awake/);
  });

  it('follows the workers of a launcher: held from the first start to the last exit', () => {
    const states: boolean[] = [];
    const exits: Array<() => void> = [];
    const inner = () => {
      const e = new EventEmitter();
      exits.push(() => e.emit('exit'));
      return { onExit: (cb: () => void) => e.on('exit', cb) } as unknown as WorkerChannel;
    };
    const launch = inhibitWhileWorkersRun(inner, { set: (r) => states.push(r) });
    launch();
    launch();
    exits[0]();
    expect(states.at(-1)).toBe(true);
    exits[1]();
    expect(states.at(-1)).toBe(false);
  });
});
