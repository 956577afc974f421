// A build's private copy of a shared timing cache and its publication, on real files. The bytes
// stand in for cache contents: this layer never parses a cache (the native layer merges), it
// only decides between replacing the shared file and adding a sidecar, and must lose nothing.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/onnx-gen.js';
import { checkOut, discard, fileLock, publish } from '../cache-copy.js';

let dir: string;
let shared: string;
const lockFree = async () => async () => undefined;
const noLock = async () => undefined;
/** Sidecars of the shared cache, name suffix → content. */
const sidecars = () =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((n) => /^shared\.cache\.pending-\d+-\d+$/.test(n))
      .map((n) => [n.slice('shared.cache.pending-'.length), fs.readFileSync(path.join(dir, n), 'utf8')]),
  );

beforeEach(() => {
  dir = tempDir('tbs-cache-copy-');
  shared = path.join(dir, 'shared.cache');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('timing-cache working copies', () => {
  it('copies the cache and its pending files; an unchanged shared cache is replaced and the folded files go', async () => {
    fs.writeFileSync(shared, 'S0');
    fs.writeFileSync(`${shared}.pending-12-0`, 'P');
    fs.writeFileSync(`${shared}.pending-12-0.rejected`, 'R'); // not a pending file: left alone
    const wc = checkOut(shared, dir);
    expect(fs.readFileSync(wc.path, 'utf8')).toBe('S0');
    expect(fs.readFileSync(`${wc.path}.pending-12-0`, 'utf8')).toBe('P');
    expect(path.dirname(wc.path)).not.toBe(dir);
    // The build's save: everything it loaded plus its own entries, pending files folded in.
    fs.writeFileSync(wc.path, 'S0+P+mine');
    fs.rmSync(`${wc.path}.pending-12-0`);
    let locked = 0;
    const out = await publish(wc, async () => {
      locked++;
      return async () => undefined;
    });
    expect(out).toEqual({ kind: 'replaced', foldedSidecars: 1, sidecars: [] });
    expect(locked).toBe(1);
    expect(fs.readFileSync(shared, 'utf8')).toBe('S0+P+mine');
    expect(sidecars()).toEqual({});
    expect(fs.existsSync(`${shared}.pending-12-0.rejected`)).toBe(true);
    expect(fs.readdirSync(dir).filter((n) => n.includes('farm-tmp'))).toEqual([]);
    discard(wc);
    expect(fs.existsSync(wc.dir)).toBe(false);
  });

  it('a shared cache changed during the build is left as it is: the copy becomes a new pending file', async () => {
    fs.writeFileSync(shared, 'S0');
    const a = checkOut(shared, dir);
    const b = checkOut(shared, dir);
    fs.writeFileSync(a.path, 'S0+a');
    fs.writeFileSync(b.path, 'S0+b');
    expect((await publish(a, lockFree)).kind).toBe('replaced');
    const out = await publish(b, lockFree);
    expect(out.kind).toBe('sidecar');
    expect(fs.readFileSync(shared, 'utf8')).toBe('S0+a');
    const [name, content] = Object.entries(sidecars())[0];
    expect(content).toBe('S0+b');
    // Named above any pid, so no native "<pid>-<n>" pending file can ever take the name.
    expect(Number(name.split('-')[0])).toBeGreaterThan(2 ** 22);
    // The next build starts from both and folds the pending file in.
    const c = checkOut(shared, dir);
    expect(fs.readFileSync(`${c.path}.pending-${name}`, 'utf8')).toBe('S0+b');
    fs.writeFileSync(c.path, 'S0+a+b');
    fs.rmSync(`${c.path}.pending-${name}`);
    expect(await publish(c, lockFree)).toMatchObject({ kind: 'replaced', foldedSidecars: 1 });
    expect(sidecars()).toEqual({});
  });

  it('publishes a first cache where there was none, and nothing when the build saved nothing', async () => {
    const empty = checkOut(shared, dir);
    expect(await publish(empty, lockFree)).toEqual({ kind: 'nothing' });
    expect(fs.existsSync(shared)).toBe(false);
    fs.writeFileSync(empty.path, 'first');
    expect((await publish(empty, lockFree)).kind).toBe('replaced');
    expect(fs.readFileSync(shared, 'utf8')).toBe('first');
    const warm = checkOut(shared, dir);
    expect(await publish(warm, lockFree)).toEqual({ kind: 'nothing' });
  });

  it('without the lock, the entries go to a pending file rather than wait or be lost', async () => {
    fs.writeFileSync(shared, 'S0');
    const wc = checkOut(shared, dir);
    fs.writeFileSync(wc.path, 'S0+mine');
    const out = await publish(wc, noLock);
    expect(out).toMatchObject({ kind: 'sidecar', why: expect.stringMatching(/lock/) });
    expect(fs.readFileSync(shared, 'utf8')).toBe('S0');
    expect(Object.values(sidecars())).toEqual(['S0+mine']);
  });

  it('keeps a pending file whose name was reused for other entries, and a damaged shared cache', async () => {
    fs.writeFileSync(shared, 'damaged');
    fs.writeFileSync(`${shared}.pending-7-1`, 'old');
    const wc = checkOut(shared, dir);
    // Folded and removed by someone else, and the name reused by a later process with that pid.
    fs.writeFileSync(`${shared}.pending-7-1`, 'new entries');
    // The native save kept the damaged copy it loaded beside the working copy.
    fs.writeFileSync(`${wc.path}.corrupt`, 'damaged');
    fs.writeFileSync(wc.path, 'fresh+old+mine');
    fs.rmSync(`${wc.path}.pending-7-1`);
    expect(await publish(wc, lockFree)).toMatchObject({ kind: 'replaced', foldedSidecars: 0 });
    expect(sidecars()).toEqual({ '7-1': 'new entries' });
    expect(fs.readFileSync(`${shared}.corrupt`, 'utf8')).toBe('damaged');
    expect(fs.readFileSync(shared, 'utf8')).toBe('fresh+old+mine');
  });

  it('a pending file the build made in its copy is published beside the shared cache', async () => {
    fs.writeFileSync(shared, 'S0');
    const wc = checkOut(shared, dir);
    fs.writeFileSync(`${wc.path}.pending-99-0`, 'mine, deferred');
    const out = await publish(wc, lockFree);
    expect(out.kind).toBe('sidecar');
    expect(Object.values(sidecars())).toEqual(['mine, deferred']);
    expect(fs.readFileSync(shared, 'utf8')).toBe('S0');
  });

  it('skips a pending file that is not a regular file instead of hanging on it', async () => {
    fs.writeFileSync(shared, 'S0');
    execFileSync('mkfifo', [`${shared}.pending-5-5`]);
    const wc = checkOut(shared, dir);
    expect(wc.copiedSidecars.size).toBe(0);
    fs.writeFileSync(wc.path, 'S0+mine');
    expect((await publish(wc, lockFree)).kind).toBe('replaced');
    expect(fs.statSync(`${shared}.pending-5-5`).isFIFO()).toBe(true);
  });

  it('replaces the shared cache only under the file lock native saves take, and releases it', async () => {
    fs.writeFileSync(shared, 'S0');
    // A build saving into the shared file directly holds flock on "<cache>.lock" meanwhile.
    // (flock runs cat, which holds the lock until its stdin closes: no process outlives the test.)
    const holder = spawn('flock', [`${shared}.lock`, 'cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const gone = new Promise((r) => holder.once('close', r));
    try {
      await new Promise<void>((r) => {
        holder.stdout!.once('data', () => r());
        holder.stdin!.write('go\n');
      });
      const wc = checkOut(shared, dir);
      fs.writeFileSync(wc.path, 'S0+mine');
      const out = await publish(wc, lockFree, { fileLockWaitMs: 300 });
      expect(out).toMatchObject({ kind: 'sidecar', why: expect.stringMatching(/file lock .*shared\.cache\.lock/) });
      expect(fs.readFileSync(shared, 'utf8')).toBe('S0');
    } finally {
      holder.stdin!.end();
      await gone;
    }
    const wc = checkOut(shared, dir);
    fs.writeFileSync(wc.path, 'S0+mine+more');
    expect((await publish(wc, lockFree, { fileLockWaitMs: 2000 })).kind).toBe('replaced');
    // Released: taken again at once.
    const again = await fileLock(`${shared}.lock`, 0);
    expect(typeof again).toBe('function');
    await (again as () => Promise<void>)();
  });
});
