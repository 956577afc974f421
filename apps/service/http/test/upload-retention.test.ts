// Farm uploads stay in the shared artifact folder across serve restarts and leave by age only.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../serve-args.js';
import { pruneUploads } from '../upload-dirs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-uploads-retention-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('farm upload retention', () => {
  it('removes uploads older than the retention, keeps newer ones and anything that is not an upload', async () => {
    const day = 24 * 3600 * 1000;
    const now = Date.now();
    const file = (name: string, ageDays: number) => {
      const p = path.join(dir, name);
      fs.writeFileSync(p, 'x');
      const t = (now - ageDays * day) / 1000;
      fs.utimesSync(p, t, t);
      return p;
    };
    const old = file('upload-0a1b.onnx', 8);
    const fresh = file('upload-0c2d.onnx', 1);
    const other = file('model.onnx', 30);
    expect(await pruneUploads(dir, 7 * day, now)).toEqual([old]);
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(other)).toBe(true);
    // 0 keeps everything.
    expect(await pruneUploads(dir, 0, now + 100 * day)).toEqual([]);
    expect(fs.existsSync(fresh)).toBe(true);
  });

  it('takes --upload-retention-days with a farm artifact folder only', () => {
    expect(parseServeArgs(['--queue', 'redis://h:1', '--artifacts', '/mnt/a', '--upload-retention-days', '3']).uploadRetentionDays).toBe(3);
    expect(() => parseServeArgs(['--upload-retention-days', '3'])).toThrow(/--upload-retention-days needs --artifacts/);
    expect(() => parseServeArgs(['--queue', 'redis://h:1', '--artifacts', '/mnt/a', '--upload-retention-days', 'x'])).toThrow(/expected an integer from 0 to 36500/);
  });
});
