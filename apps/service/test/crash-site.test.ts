// The host's reading of the crash record a worker's native layer keeps (native/src/core/
// crash_record.h writes it; the layout is in apps/service/crash-site.ts). Records here are built
// byte by byte, including the torn and short ones a crash can leave.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCrashSite, readCrashSite, removeCrashRecord } from '../crash-site.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-crash-site-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SLOT = 256;
interface Slot {
  seq: bigint;
  names: string[];
  /** A write cut short: the end marker does not match the start. */
  torn?: boolean;
}

function record(slots: Slot[], slotCount = 4): Buffer {
  const buf = Buffer.alloc(64 + slotCount * SLOT);
  buf.write('TBSCRASH', 0, 'latin1');
  buf.writeUInt32LE(1, 8);
  buf.writeUInt32LE(slotCount, 12);
  buf.writeUInt32LE(SLOT, 16);
  slots.forEach((s, i) => {
    const at = 64 + i * SLOT;
    const text = Buffer.from(s.names.join('\n'), 'utf8');
    buf.writeBigUInt64LE(s.seq, at);
    buf.writeUInt32LE(s.names.length, at + 8);
    buf.writeUInt32LE(text.length, at + 12);
    text.copy(buf, at + 16);
    buf.writeBigUInt64LE(s.torn ? s.seq - 1n : s.seq, at + SLOT - 8);
  });
  return buf;
}

let n = 0;
function file(content: Buffer | string): string {
  const p = path.join(dir, `r${n++}.crash`);
  fs.writeFileSync(p, content);
  return p;
}

describe('readCrashSite', () => {
  it('returns the newest complete slot, outermost phase first', () => {
    const p = file(
      record([
        { seq: 3n, names: ['Building engine', 'Optimizing graph'] },
        { seq: 7n, names: ['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics'] },
        { seq: 5n, names: ['Building engine'] },
      ]),
    );
    expect(readCrashSite(p)).toEqual(['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics']);
    // It deletes nothing: the caller owns the file.
    expect(fs.existsSync(p)).toBe(true);
  });

  it('skips a slot the crash tore mid-write and falls back to the previous complete one', () => {
    const p = file(
      record([
        { seq: 4n, names: ['Building engine', 'Timing tactics'] },
        { seq: 9n, names: ['Building engine', 'Timing tactics', 'Timing graph nodes'], torn: true },
      ]),
    );
    expect(readCrashSite(p)).toEqual(['Building engine', 'Timing tactics']);
  });

  it('reads only the slots a short file holds', () => {
    const full = record([
      { seq: 2n, names: ['A'] },
      { seq: 6n, names: ['A', 'B'] },
    ]);
    expect(readCrashSite(file(full.subarray(0, 64 + SLOT + 10)))).toEqual(['A']);
    expect(readCrashSite(file(full.subarray(0, 40)))).toBeUndefined();
  });

  it('is undefined when nothing was open, for a foreign or missing file, and for a depth that does not match', () => {
    expect(readCrashSite(file(record([{ seq: 8n, names: [] }])))).toBeUndefined();
    expect(readCrashSite(file('Building engine\nTiming tactics\n'))).toBeUndefined();
    expect(readCrashSite(path.join(dir, 'missing.crash'))).toBeUndefined();
    const bad = record([{ seq: 3n, names: ['A', 'B'] }]);
    bad.writeUInt32LE(3, 64 + 8); // says three names, holds two
    expect(readCrashSite(file(bad))).toBeUndefined();
  });

  it('formats the path, and removes a record quietly even when it is gone', () => {
    expect(formatCrashSite(['Building engine', 'Timing tactics'])).toBe('Building engine › Timing tactics');
    const p = file(record([{ seq: 1n, names: ['A'] }]));
    removeCrashRecord(p);
    expect(fs.existsSync(p)).toBe(false);
    expect(() => removeCrashRecord(p)).not.toThrow();
  });
});
