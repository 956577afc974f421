// The claim on an output file across processes (output-claim.ts): held while its process (or its
// worker) lives, refused to everyone else with who holds it, and taken over once both are gone
// (killed: no release ran), including when the pid was reused by another program since. Real
// processes stand for holders; the claim files are the module's own.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimFile, claimOutput, describeHolder, processStart, type ClaimHolder } from '../output-claim.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

let dir: string;
let claims: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = tempDir('tbs-claim-');
  claims = path.join(dir, 'state', 'output-claims');
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A process that sleeps until killed. */
function sleeper(): ChildProcess {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(c);
  return c;
}

/** The pid of a process that has exited (and was reaped). */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

/** A claim file as another process would have left it. */
function plant(target: string, h: Partial<ClaimHolder>): void {
  fs.mkdirSync(claims, { recursive: true, mode: 0o700 });
  const holder: ClaimHolder = { v: 1, nonce: 'n-other', buildId: 'b9-other', target, host: os.hostname(), pid: 1, command: 'trt-build-studio serve', ...h };
  fs.writeFileSync(claimFile(claims, target), JSON.stringify(holder), { mode: 0o600 });
}

let n = 0;
const target = () => path.join(dir, `out-${++n}.engine`);

describe('output claims across processes', () => {
  it('a second claim of one output is refused naming the holder; after release it is free again', () => {
    const t = target();
    const a = claimOutput(t, 'b1-aaa', claims);
    expect(a.ok).toBe(true);
    const b = claimOutput(t, 'b2-bbb', claims);
    expect(b.ok).toBe(false);
    if (b.ok) return;
    expect(b.holder.buildId).toBe('b1-aaa');
    expect(b.holder.pid).toBe(process.pid);
    expect(describeHolder(b.holder)).toMatch(new RegExp(`^b1-aaa of .+, pid ${process.pid}$`));
    // Another output is not affected.
    const other = claimOutput(target(), 'b3-ccc', claims);
    expect(other.ok).toBe(true);
    if (other.ok) other.claim.release();
    if (a.ok) a.claim.release();
    expect(fs.existsSync(claimFile(claims, t))).toBe(false);
    const c = claimOutput(t, 'b2-bbb', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
  });

  it('a live process of another claim holds it; a dead one, or a reused pid, does not', async () => {
    const s = sleeper();
    await new Promise((r) => s.once('spawn', r));
    const t = target();
    plant(t, { pid: s.pid!, start: processStart(s.pid!) });
    const held = claimOutput(t, 'b1', claims);
    expect(held.ok).toBe(false);
    if (!held.ok) expect(describeHolder(held.holder)).toBe(`b9-other of trt-build-studio serve, pid ${s.pid}`);

    // The same pid, but a start time of another process: the pid was reused, the holder is gone.
    plant(t, { pid: s.pid!, start: '1' });
    const reused = claimOutput(t, 'b2', claims);
    expect(reused.ok).toBe(true);
    if (reused.ok) reused.claim.release();

    const dead = deadPid();
    plant(t, { pid: dead });
    const taken = claimOutput(t, 'b3', claims);
    expect(taken.ok).toBe(true);
    if (taken.ok) {
      const now = JSON.parse(fs.readFileSync(claimFile(claims, t), 'utf8')) as ClaimHolder;
      expect(now.buildId).toBe('b3');
      taken.claim.release();
    }
  });

  it("a dead host's claim holds while its worker lives, and not after", async () => {
    const w = sleeper();
    await new Promise((r) => w.once('spawn', r));
    const t = target();
    plant(t, { pid: deadPid(), workerPid: w.pid!, workerStart: processStart(w.pid!) });
    expect(claimOutput(t, 'b1', claims).ok).toBe(false);
    w.kill('SIGKILL');
    await new Promise((r) => w.once('exit', r));
    const c = claimOutput(t, 'b2', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
  });

  it('a claim file that is not a claim (garbage, empty) is taken over', () => {
    for (const text of ['', '{"v":1', 'null', '{"v":2}']) {
      const t = target();
      fs.mkdirSync(claims, { recursive: true, mode: 0o700 });
      fs.writeFileSync(claimFile(claims, t), text);
      const c = claimOutput(t, 'b1', claims);
      expect(c.ok, JSON.stringify(text)).toBe(true);
      if (c.ok) c.claim.release();
    }
  });

  it('the worker named in a claim keeps it; release removes only its own claim, never one that replaced it', () => {
    const t = target();
    const a = claimOutput(t, 'b1', claims);
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    a.claim.setWorker(process.pid);
    const file = claimFile(claims, t);
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as ClaimHolder).workerPid).toBe(process.pid);
    // Replaced meanwhile (by a process that found it stale): the release leaves the new one.
    plant(t, { nonce: 'n-new', pid: process.ppid });
    a.claim.release();
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as ClaimHolder).nonce).toBe('n-new');
  });

  it('a claim of this process that no build here holds (a release lost in a race) is stale', () => {
    const t = target();
    plant(t, { pid: process.pid, start: processStart(process.pid), nonce: 'n-lost' });
    const c = claimOutput(t, 'b1', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
  });

  it('refuses a claim folder another user could write into, saying so', () => {
    const open = path.join(dir, 'open-claims');
    fs.mkdirSync(open, { mode: 0o777 });
    fs.chmodSync(open, 0o777);
    expect(() => claimOutput(target(), 'b1', open)).toThrow(/output claim folder .* is writable by other users/);
  });

  it('the holder named in a refusal is shown with its control characters escaped', () => {
    const t = target();
    plant(t, { pid: process.ppid, buildId: 'b1\u001b]0;pwned\u0007', command: 'x\u202ey' });
    const r = claimOutput(t, 'b2', claims);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(describeHolder(r.holder)).toBe(`b1\\x1b]0;pwned\\x07 of x\\u202ey, pid ${process.ppid}`);
  });
});
