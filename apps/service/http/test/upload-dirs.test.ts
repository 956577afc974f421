// Which upload folders the start-up sweep removes: only those whose owner is provably gone.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createUploadDir, ownerGone, processStartTime, removeStaleUploadDirs } from '../upload-dirs.js';

let base: string;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-updirs-'));
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

/** The PID of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

it('names its folder after its own PID and start time, and keeps it', async () => {
  const mine = await createUploadDir(base);
  const start = processStartTime(process.pid);
  expect(start).toMatch(/^\d+$/);
  expect(path.basename(mine)).toMatch(new RegExp(`^tbs-uploads-${process.pid}-${start}-[A-Za-z0-9]{6}$`));
  expect(fs.statSync(mine).mode & 0o777).toBe(0o700);
  expect(await removeStaleUploadDirs(base)).toEqual([]);
  expect(fs.existsSync(mine)).toBe(true);
});

it('removes folders of dead PIDs and of reused PIDs; keeps live owners, unmarked folders and files', async () => {
  const ppid = process.ppid; // alive for the whole test
  const liveStart = processStartTime(ppid)!;
  const dead = path.join(base, `tbs-uploads-${deadPid()}-12345-aaaaaa`);
  const reused = path.join(base, `tbs-uploads-${ppid}-${Number(liveStart) + 1}-bbbbbb`);
  const live = path.join(base, `tbs-uploads-${ppid}-${liveStart}-cccccc`);
  const unmarked = path.join(base, 'tbs-uploads-dddddd');
  const notADir = path.join(base, `tbs-uploads-${deadPid()}-1-eeeeee`);
  for (const d of [dead, reused, live, unmarked]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(dead, 'upload-1.onnx'), 'x');
  fs.writeFileSync(notADir, 'a file, not a folder');

  expect(ownerGone(path.basename(live))).toBe(false);
  expect(ownerGone(path.basename(reused))).toBe(true);
  expect(ownerGone(path.basename(unmarked))).toBeUndefined();

  const removed = await removeStaleUploadDirs(base);
  expect(removed.sort()).toEqual([dead, reused].sort());
  expect(fs.readdirSync(base).sort()).toEqual([path.basename(live), path.basename(notADir), path.basename(unmarked)].sort());
});
