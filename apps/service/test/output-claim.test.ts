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
import { SYMLINK_FIFO_FOLDER } from '../../../test/support/planted-outputs.js';
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

// A build killed with its worker (SIGKILL: no clean-up ran) leaves the worker's temp file beside
// the engine. The build that takes over its stale claim removes that file, and only that: what
// merely looks like it (a link, a FIFO, a folder, a file with a second name, another pid's, a name
// off the pattern) stays, and a claim that stands touches nothing.
describe("taking over a stale claim removes its dead build's temp files, and nothing else", () => {
  /** A fresh output folder and its target path, `model.engine` in it. */
  function outFolder(): { folder: string; out: string } {
    const folder = fs.mkdtempSync(path.join(dir, 'temps-'));
    return { folder, out: path.join(folder, 'model.engine') };
  }

  const devIno = (p: string) => {
    const st = fs.lstatSync(p);
    return `${st.dev}:${st.ino}`;
  };

  /**
   * Beside `out`: what a worker of pid `p` would have left (`model.engine.tmp-<p>-0`, returned),
   * and neighbours that only look like it, each checked by the function returned with it.
   */
  function plantAround(folder: string, p: number): { leftover: string; checkNeighbours: () => void } {
    const at = (name: string) => path.join(folder, name);
    const leftover = at(`model.engine.tmp-${p}-0`);
    fs.writeFileSync(leftover, 'half an engine');
    const outside = fs.mkdtempSync(path.join(dir, 'outside-'));
    // The shared symlink, FIFO and folder, each planted under a temp name of the dead worker.
    const [link, fifo, folderCase] = SYMLINK_FIFO_FOLDER.map((c, i) => ({ c, name: at(`model.engine.tmp-${p}-${i + 1}`) }));
    link!.c.plant(link!.name, outside);
    fifo!.c.plant(fifo!.name, folder);
    folderCase!.c.plant(folderCase!.name, folder);
    // A file of the worker's name that has a second name elsewhere: not only a temp file.
    fs.writeFileSync(at(`model.engine.tmp-${p}-4`), 'linked');
    fs.linkSync(at(`model.engine.tmp-${p}-4`), path.join(outside, 'second-name'));
    const plain: Record<string, string> = {
      [`model.engine.tmp-${process.pid}-0`]: 'a live process writes this',
      [`model.engine.tmp-${p}-x`]: 'not digits',
      [`model.engine.tmp-${p}-0.keep`]: 'longer than the pattern',
      [`model.engine.tmp-${p}-`]: 'no counter',
      [`other.engine.tmp-${p}-0`]: "another output's",
      [`xmodel.engine.tmp-${p}-0`]: 'a longer name ending alike',
      'model.engine': 'the engine already there',
    };
    for (const [name, text] of Object.entries(plain)) fs.writeFileSync(at(name), text);
    return {
      leftover,
      checkNeighbours: () => {
        link!.c.check(link!.name, outside);
        fifo!.c.check(fifo!.name, folder);
        folderCase!.c.check(folderCase!.name, folder);
        expect(fs.readFileSync(at(`model.engine.tmp-${p}-4`), 'utf8')).toBe('linked');
        for (const [name, text] of Object.entries(plain)) expect(fs.readFileSync(at(name), 'utf8'), name).toBe(text);
      },
    };
  }

  const tmpNames = (folder: string) =>
    fs
      .readdirSync(folder)
      .filter((f) => f.includes('.tmp-'))
      .sort();

  it("a claim that recorded no identities (not watched, or an older claim): the dead worker's regular temp files by name", () => {
    const { folder, out } = outFolder();
    const worker = deadPid();
    const { leftover, checkNeighbours } = plantAround(folder, worker);
    const before = tmpNames(folder);
    plant(out, { pid: deadPid(), workerPid: worker });
    const c = claimOutput(out, 'b1', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
    expect(fs.existsSync(leftover)).toBe(false);
    expect(tmpNames(folder)).toEqual(before.filter((f) => f !== path.basename(leftover)));
    checkNeighbours();
  });

  it("the dead holder's own temps (a stored engine being placed, its layer file, its manifest): by name, pid and kind", () => {
    const { folder, out } = outFolder();
    const holder = deadPid();
    const worker = deadPid();
    const at = (name: string) => path.join(folder, name);
    const left = [`model.engine.tmp-${holder}-reuse-3`, `model.engine.layers.json.tmp-${holder}-reuse-4`, `model.engine.manifest.json.tmp-${holder}-7`];
    for (const name of left) fs.writeFileSync(at(name), 'half written');
    const outside = fs.mkdtempSync(path.join(dir, 'outside-'));
    fs.writeFileSync(path.join(outside, 'theirs'), 'not the build’s');
    fs.symlinkSync(path.join(outside, 'theirs'), at(`model.engine.tmp-${holder}-reuse-9`));
    const stay: Record<string, string> = {
      [`model.engine.manifest.json.tmp-${holder}-x`]: 'not digits',
      [`model.engine.tmp-${holder}-reuse-`]: 'no counter',
      [`model.engine.tmp-${holder}-0`]: 'the worker pattern with the holder pid: no holder writes it',
      [`model.engine.manifest.json.tmp-${process.pid}-1`]: 'a live process writes this',
      [`other.engine.manifest.json.tmp-${holder}-1`]: "another output's",
    };
    for (const [name, text] of Object.entries(stay)) fs.writeFileSync(at(name), text);
    plant(out, { pid: holder, workerPid: worker });
    const c = claimOutput(out, 'b1', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
    for (const name of left) expect(fs.existsSync(at(name)), name).toBe(false);
    expect(fs.readFileSync(at(`model.engine.tmp-${holder}-reuse-9`), 'utf8')).toBe('not the build’s');
    expect(fs.lstatSync(at(`model.engine.tmp-${holder}-reuse-9`)).isSymbolicLink()).toBe(true);
    for (const [name, text] of Object.entries(stay)) expect(fs.readFileSync(at(name), 'utf8'), name).toBe(text);
  });

  it('a claim that recorded its temp files: only those very files, whatever else carries the name', () => {
    const { folder, out } = outFolder();
    const worker = deadPid();
    const { leftover, checkNeighbours } = plantAround(folder, worker);
    // Of the worker's name, a regular file of this user with one link, but not one the holder saw.
    const unseen = path.join(folder, `model.engine.tmp-${worker}-5`);
    fs.writeFileSync(unseen, 'not seen by the holder');
    // The claim as a holder writes it (setWorker, watchTemps, addTemp), then left by a holder that died.
    const held = claimOutput(out, 'b0', claims);
    expect(held.ok).toBe(true);
    if (!held.ok) return;
    held.claim.setWorker(worker);
    held.claim.watchTemps(true);
    held.claim.addTemp(devIno(leftover));
    const written = JSON.parse(fs.readFileSync(claimFile(claims, out), 'utf8')) as ClaimHolder;
    expect(written.workerPid).toBe(worker);
    expect(written.temps).toEqual([devIno(leftover)]);
    held.claim.release();
    plant(out, { ...written, pid: deadPid(), start: undefined });
    const c = claimOutput(out, 'b1', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
    expect(fs.existsSync(leftover)).toBe(false);
    expect(fs.readFileSync(unseen, 'utf8')).toBe('not seen by the holder');
    checkNeighbours();
  });

  it('a list of identities not of this form keeps a live claim standing, and a stale one is taken with nothing removed', async () => {
    const { folder, out } = outFolder();
    const worker = deadPid();
    const leftover = path.join(folder, `model.engine.tmp-${worker}-0`);
    fs.writeFileSync(leftover, 'x');
    const s = sleeper();
    await new Promise((r) => s.once('spawn', r));
    for (const temps of ['1:2', [1, 2], ['a:b']]) {
      plant(out, { pid: s.pid!, start: processStart(s.pid!), workerPid: worker, temps: temps as unknown as string[] });
      expect(claimOutput(out, 'b1', claims).ok, JSON.stringify(temps)).toBe(false);
      plant(out, { pid: deadPid(), workerPid: worker, temps: temps as unknown as string[] });
      const c = claimOutput(out, 'b2', claims);
      expect(c.ok, JSON.stringify(temps)).toBe(true);
      if (c.ok) c.claim.release();
      expect(fs.existsSync(leftover), JSON.stringify(temps)).toBe(true);
    }
  });

  it('a watch that failed takes the identities back out of the claim (the name rule then)', () => {
    const t = target();
    const c = claimOutput(t, 'b1', claims);
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    c.claim.watchTemps(true);
    c.claim.addTemp('1:2');
    expect((JSON.parse(fs.readFileSync(claimFile(claims, t), 'utf8')) as ClaimHolder).temps).toEqual(['1:2']);
    c.claim.watchTemps(false);
    expect((JSON.parse(fs.readFileSync(claimFile(claims, t), 'utf8')) as ClaimHolder).temps).toBeUndefined();
    c.claim.release();
  });

  it('a claim that stands (its holder, or its worker, alive) has nothing removed; once the worker is gone, its file goes', async () => {
    const { folder, out } = outFolder();
    const holderProc = sleeper();
    const w = sleeper();
    await Promise.all([new Promise((r) => holderProc.once('spawn', r)), new Promise((r) => w.once('spawn', r))]);
    const dead = deadPid();
    const deadWorkers = path.join(folder, `model.engine.tmp-${dead}-0`);
    const liveWorkers = path.join(folder, `model.engine.tmp-${w.pid}-0`);
    fs.writeFileSync(deadWorkers, 'x');
    fs.writeFileSync(liveWorkers, 'y');
    // The holder lives; its worker is gone.
    plant(out, { pid: holderProc.pid!, start: processStart(holderProc.pid!), workerPid: dead });
    expect(claimOutput(out, 'b1', claims).ok).toBe(false);
    expect(fs.existsSync(deadWorkers)).toBe(true);
    // The holder is gone; its worker winds down.
    plant(out, { pid: deadPid(), workerPid: w.pid!, workerStart: processStart(w.pid!) });
    expect(claimOutput(out, 'b2', claims).ok).toBe(false);
    expect(fs.existsSync(liveWorkers)).toBe(true);
    w.kill('SIGKILL');
    await new Promise((r) => w.once('exit', r));
    const c = claimOutput(out, 'b3', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
    expect(fs.existsSync(liveWorkers)).toBe(false);
    // Not the claim's worker: stays.
    expect(fs.existsSync(deadWorkers)).toBe(true);
  });

  it("a worker pid that another process runs now (reused): the claim is stale, the pid's files stay", async () => {
    const { folder, out } = outFolder();
    const s = sleeper();
    await new Promise((r) => s.once('spawn', r));
    const file = path.join(folder, `model.engine.tmp-${s.pid}-0`);
    fs.writeFileSync(file, 'maybe the new process writes this');
    plant(out, { pid: deadPid(), workerPid: s.pid!, workerStart: '1' });
    const c = claimOutput(out, 'b1', claims);
    expect(c.ok).toBe(true);
    if (c.ok) c.claim.release();
    expect(fs.readFileSync(file, 'utf8')).toBe('maybe the new process writes this');
  });
});
