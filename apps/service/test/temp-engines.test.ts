import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ATOMIC_TEMP_NAME, sweepTempEngines } from '../temp-engines.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, { ageMs: number; bytes?: number }>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-temp-engines-'));
  dirs.push(dir);
  const now = Date.now();
  for (const [name, { ageMs, bytes = 10 }] of Object.entries(files)) {
    const f = path.join(dir, name);
    fs.writeFileSync(f, Buffer.alloc(bytes));
    const t = new Date(now - ageMs);
    fs.utimesSync(f, t, t);
  }
  return dir;
}

describe('sweepTempEngines', () => {
  it("matches exactly the native atomic writer's temp names (<target>.tmp-<pid>-<n>)", () => {
    expect(ATOMIC_TEMP_NAME.test('resnet.engine.tmp-4242-0')).toBe(true);
    expect(ATOMIC_TEMP_NAME.test('resnet.engine.tmp-4242-18446744073709551615')).toBe(true);
    for (const n of ['resnet.engine', 'resnet.tmp-engine', 'a.engine.tmp-x-1', 'a.engine.tmp-1-', 'a.engine.tmp-12345678901-1', '.tmp-1-2']) {
      expect(ATOMIC_TEMP_NAME.test(n), n).toBe(false);
    }
  });

  it('removes old temp engines of dead pids, keeps engines, fresh files, live pids and links; logs one line', async () => {
    const hour = 3_600_000;
    const dir = folder({
      'a.engine.tmp-900001-0': { ageMs: hour, bytes: 1000 },
      'b.timing.cache.tmp-900002-3': { ageMs: hour, bytes: 500 },
      'kept.engine': { ageMs: hour },
      'fresh.engine.tmp-900003-0': { ageMs: -60_000 },
      'live.engine.tmp-900004-0': { ageMs: hour },
    });
    fs.symlinkSync('/etc/hostname', path.join(dir, 'link.engine.tmp-900005-0'));
    const lines: string[] = [];
    const res = await sweepTempEngines(dir, { olderThanMs: Date.now() - 1000, isAlive: (pid) => pid === 900004, log: (m) => lines.push(m) });
    expect(res.removed.sort()).toEqual(['a.engine.tmp-900001-0', 'b.timing.cache.tmp-900002-3']);
    expect(res.bytes).toBe(1500);
    expect(fs.readdirSync(dir).sort()).toEqual(['fresh.engine.tmp-900003-0', 'kept.engine', 'link.engine.tmp-900005-0', 'live.engine.tmp-900004-0']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^removed 2 leftover temp engine file\(s\), 0\.000 GB, from .*: /);
  });

  it("leaves another user's files alone", async () => {
    const dir = folder({ 'a.engine.tmp-900001-0': { ageMs: 3_600_000 } });
    const other = (process.getuid?.() ?? 0) + 1;
    const res = await sweepTempEngines(dir, { olderThanMs: Date.now(), uid: other, isAlive: () => false });
    expect(res.removed).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual(['a.engine.tmp-900001-0']);
  });

  it('treats this process as alive by default and a missing folder as nothing to sweep', async () => {
    const dir = folder({ [`a.engine.tmp-${process.pid}-0`]: { ageMs: 3_600_000 } });
    expect((await sweepTempEngines(dir, { olderThanMs: Date.now() })).removed).toEqual([]);
    expect(await sweepTempEngines(path.join(dir, 'nope'), { olderThanMs: Date.now() })).toEqual({ removed: [], bytes: 0 });
  });
});
