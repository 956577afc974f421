// The build workers' stderr files (see apps/worker/stderr-file.ts): one per worker in a folder of
// the app's own (created 0700), the newest KEEP kept so a user can open what a crashed worker
// printed, the older ones removed as new workers start.
import fs from 'node:fs';
import path from 'node:path';

const KEEP = 20;
const PREFIX = 'worker-';
const SUFFIX = '.stderr.log';

export class StderrFiles {
  constructor(
    private readonly dir: string,
    private readonly log?: (m: string) => void,
  ) {}

  /** A fresh file name for worker number `n`; prunes old files. Undefined when the folder is unusable. */
  next(n: number): string | undefined {
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.prune();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      return path.join(this.dir, `${PREFIX}${stamp}-${process.pid}-${String(n).padStart(6, '0')}${SUFFIX}`);
    } catch (e) {
      this.log?.(`worker stderr files disabled: ${(e as Error).message}`);
      return undefined;
    }
  }

  /** The last `maxBytes` of the file ('' when it was never written). */
  tail(file: string, maxBytes: number): string {
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      const size = fs.fstatSync(fd).size;
      const len = Math.min(size, maxBytes);
      const buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, size - len);
      return buf.toString('utf8');
    } catch {
      return '';
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  private prune(): void {
    const files = fs
      .readdirSync(this.dir)
      .filter((f) => f.startsWith(PREFIX) && f.endsWith(SUFFIX))
      .sort();
    for (const f of files.slice(0, Math.max(0, files.length - (KEEP - 1)))) fs.rmSync(path.join(this.dir, f), { force: true });
  }
}
