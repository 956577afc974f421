// The host's reading of the crash record the native layer keeps outside the worker.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCrashSite, readCrashSite } from '../crash-site.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-crash-site-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readCrashSite', () => {
  it('reads the open phase path, outermost first, and deletes the record', () => {
    const f = path.join(dir, 'a.phases');
    fs.writeFileSync(f, 'Building engine\nTiming graph nodes\nTiming tactics\n');
    expect(readCrashSite(f)).toEqual(['Building engine', 'Timing graph nodes', 'Timing tactics']);
    expect(fs.existsSync(f)).toBe(false);
  });

  it('ignores NUL padding of a fixed-size mapped file, CRLF and control characters', () => {
    const f = path.join(dir, 'b.phases');
    fs.writeFileSync(f, Buffer.concat([Buffer.from('Building engine\r\nTiming\u0007 tactics\n'), Buffer.alloc(4096)]));
    expect(readCrashSite(f)).toEqual(['Building engine', 'Timing tactics']);
  });

  it('is undefined without a record, and [] for an empty one (nothing was open)', () => {
    expect(readCrashSite(path.join(dir, 'missing.phases'))).toBeUndefined();
    const f = path.join(dir, 'c.phases');
    fs.writeFileSync(f, '');
    expect(readCrashSite(f)).toEqual([]);
  });

  it('formats the path the way the error message shows it', () => {
    expect(formatCrashSite(['Building engine', 'Timing tactics'])).toBe('Building engine › Timing tactics');
  });
});
