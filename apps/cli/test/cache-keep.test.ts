// Measured tactics are never thrown away, end to end through the CLI and its worker process:
// a build stopped by Ctrl-C or by its time budget saves what it timed, and the next build starts
// from it; a build whose cache lock another process holds keeps its entries beside the cache,
// and the next build merges them.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { collect, parseNdjson, runCli, spawnCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const holders: ChildProcess[] = [];
type CacheStatsEvent = Extract<BuildEvent, { type: 'cache.stats' }>;

beforeAll(() => {
  dir = tempDir('tbs-cache-keep-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 16 });
});
afterEach(() => {
  // A lock holder runs in its own process group (flock and its sleep): end both, also on failure.
  for (const h of holders.splice(0)) {
    if (h.exitCode === null && h.signalCode === null && h.pid) process.kill(-h.pid, 'SIGKILL');
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-seed', '7'];

/** Entries in a simulated timing cache file (header "TBSSIMTC", version, count, ...). */
function entriesInFile(file: string): number {
  const b = fs.readFileSync(file);
  expect(b.subarray(0, 8).toString('latin1')).toBe('TBSSIMTC');
  return b.readUInt32LE(12);
}

function cacheStats(events: BuildEvent[]): CacheStatsEvent {
  const stats = events.filter((e): e is CacheStatsEvent => e.type === 'cache.stats');
  expect(stats).toHaveLength(1);
  // Sent before the build ends, so every consumer sees it.
  expect(events.indexOf(stats[0])).toBeLessThan(events.findIndex((e) => e.type === 'build.finished'));
  return stats[0];
}

/** Spawns a --json build; `finished(n)` resolves once n "Evaluating tactic times" phases finished. */
function liveBuild(args: string[]) {
  const child = spawnCli(['build', ...args, '--json']);
  const done = collect(child);
  const names = new Map<number, string>();
  let evaluated = 0;
  let buf = '';
  child.stdout!.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const e = JSON.parse(buf.slice(0, nl)) as BuildEvent;
      buf = buf.slice(nl + 1);
      if (e.type === 'phase.start') names.set(e.id, e.name);
      if (e.type === 'phase.finish' && names.get(e.id) === 'Evaluating tactic times') evaluated++;
    }
  });
  const evaluatedAtLeast = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const t = setInterval(() => {
        if (evaluated >= n) {
          clearInterval(t);
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(t);
          reject(new Error(`build ended (exit ${child.exitCode}) after ${evaluated} evaluated groups`));
        }
      }, 10);
    });
  return { child, done, evaluatedAtLeast };
}

describe('a stopped build keeps what it measured', () => {
  it('Ctrl-C midway: the entries timed so far are saved, counted, and the next build starts from them', async () => {
    const cache = path.join(dir, 'sigint.cache');
    const b = liveBuild([model, '-o', path.join(dir, 'sigint.engine'), ...SIM, '--sim-duration', '8', '--timing-cache', cache]);
    await b.evaluatedAtLeast(3);
    b.child.kill('SIGINT');
    const r = await b.done;
    expect(r.code).toBe(130);
    const events = assertEventStream(parseNdjson(r.stdout));
    const fin = events[events.length - 1] as BuildFinished;
    expect(fin.status).toBe('cancelled');
    const stats = cacheStats(events);
    expect(stats.savedAfterCancel).toBe(true);
    expect(stats.entriesBefore).toBe(0);
    expect(stats.added).toBeGreaterThanOrEqual(3);
    expect(fin.cache).toMatchObject({ savedAfterCancel: true, added: stats.added });
    expect(entriesInFile(cache)).toBe(stats.added);
    expect(events.some((e) => e.type === 'log' && e.message.includes(`kept ${stats.added} measured timing-cache entries`))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'sigint.engine'))).toBe(false);

    // The same build again, to the end: it starts from the saved entries and hits them.
    const next = await runCli(['build', model, '-o', path.join(dir, 'sigint-2.engine'), ...SIM, '--sim-duration', '1', '--timing-cache', cache, '--json']);
    expect(next.code).toBe(0);
    const s2 = cacheStats(parseNdjson(next.stdout) as BuildEvent[]);
    expect(s2.entriesBefore).toBe(stats.added);
    expect(s2.hits).toBe(stats.added);
    expect(s2.savedAfterCancel).toBeUndefined();
    expect(entriesInFile(cache)).toBe(s2.entriesAfter);
    expect(s2.entriesAfter).toBeGreaterThan(stats.added);
  });

  it('a time budget that runs out keeps them too', async () => {
    const cache = path.join(dir, 'budget.cache');
    const r = await runCli(['build', model, '-o', path.join(dir, 'budget.engine'), ...SIM, '--sim-duration', '12', '--time-budget', '4', '--timing-cache', cache, '--json']);
    expect(r.code).toBe(130);
    const events = parseNdjson(r.stdout) as BuildEvent[];
    expect(events.find((e) => e.type === 'build.cancelling')).toMatchObject({ reason: 'timeout' });
    const stats = cacheStats(events);
    expect(stats.savedAfterCancel).toBe(true);
    expect(stats.added).toBeGreaterThan(0);
    expect(entriesInFile(cache)).toBe(stats.added);
  });
});

describe('a held cache lock loses nothing', () => {
  /** Another process holding the cache's lock, as a stuck build elsewhere would. */
  async function holdLock(lockFile: string): Promise<void> {
    const h = spawn('flock', ['--exclusive', lockFile, 'sleep', '120'], { detached: true, stdio: 'ignore' });
    holders.push(h);
    // Held once a non-blocking attempt fails.
    for (let i = 0; i < 200; i++) {
      const probe = await collect(spawn('flock', ['--nonblock', lockFile, 'true'], { stdio: 'ignore' }));
      if (probe.code === 1) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`flock did not take ${lockFile}`);
  }

  it('the build finishes, keeps its entries beside the cache, and the next build merges them', async () => {
    const cache = path.join(dir, 'held.cache');
    await holdLock(`${cache}.lock`);
    const env = { ...process.env, TBS_TIMING_CACHE_LOCK_TIMEOUT_MS: '500' };
    const a = await runCli(['build', model, '-o', path.join(dir, 'held-a.engine'), ...SIM, '--sim-duration', '0.5', '--timing-cache', cache, '--json'], { env });
    expect(a.code).toBe(0);
    const sa = cacheStats(parseNdjson(a.stdout) as BuildEvent[]);
    expect(sa.deferredPath).toMatch(new RegExp(`^${cache.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.pending-\\d+-\\d+$`));
    expect(sa.warning).toMatch(/timed out after 500 ms waiting for lock/);
    expect(sa.warning).toContain(`kept in ${sa.deferredPath}`);
    expect(sa.misses).toBeGreaterThan(0);
    expect(entriesInFile(sa.deferredPath!)).toBe(sa.misses);
    expect(fs.existsSync(cache)).toBe(false); // nothing was written without the lock
    expect(fs.existsSync(path.join(dir, 'held-a.engine'))).toBe(true);

    for (const h of holders.splice(0)) process.kill(-h.pid!, 'SIGKILL');
    // Another precision: other keys, so the counts of the two builds add up.
    const b = await runCli(['build', model, '-o', path.join(dir, 'held-b.engine'), ...SIM, '--fp16', '--sim-duration', '0.5', '--timing-cache', cache, '--json'], { env });
    expect(b.code).toBe(0);
    const sb = cacheStats(parseNdjson(b.stdout) as BuildEvent[]);
    expect(sb.entriesBefore).toBe(sa.misses); // started from the sidecar's entries
    expect(sb.deferredPath).toBeUndefined();
    expect(sb.entriesAfter).toBe(sa.misses! + sb.misses!);
    expect(entriesInFile(cache)).toBe(sa.misses! + sb.misses!);
    expect(fs.existsSync(sa.deferredPath!)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('held.cache.pending-'))).toEqual([]);
  });
});

describe('a path that is not a timing cache', () => {
  it('exits 2 before building and leaves the file as it was', async () => {
    const config = path.join(dir, 'settings.json');
    fs.writeFileSync(config, '{"precision": "fp16"}\n');
    const r = await runCli(['build', model, '-o', path.join(dir, 'cfg.engine'), ...SIM, '--timing-cache', config]);
    expect(r.code).toBe(2);
    expect(r.stderr + r.stdout).toMatch(/settings\.json is not a timing cache: it looks like a text file/);
    expect(fs.readFileSync(config, 'utf8')).toBe('{"precision": "fp16"}\n');
    expect(fs.existsSync(path.join(dir, 'cfg.engine'))).toBe(false);
  });
});
