// Recently opened models: a small JSON list in userData (for our own "Open Recent" menu and the
// renderer), mirrored into the OS list through app.addRecentDocument. A missing or corrupt file
// means an empty list, never a failed start.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from './atomic-file.js';

export const RECENT_MAX = 10;

export interface RecentHooks {
  addToOs?(p: string): void;
  onChange?(list: string[]): void;
}

export class RecentFiles {
  private list: string[] | null = null;
  // Changes run one at a time: two quick opens must not both start from the same old list, nor
  // interleave their temp + rename sequences.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly hooks: RecentHooks = {},
    private readonly max = RECENT_MAX,
  ) {}

  get(): Promise<string[]> {
    return this.serial(async () => [...(await this.load())]);
  }

  add(p: string): Promise<string[]> {
    return this.serial(async () => {
      const current = await this.load();
      await this.save([p, ...current.filter((x) => x !== p)].slice(0, this.max));
      this.hooks.addToOs?.(p);
      return [...this.list!];
    });
  }

  /** Drops an entry that no longer opens (moved or deleted file). */
  remove(p: string): Promise<void> {
    return this.serial(async () => {
      const current = await this.load();
      if (current.includes(p)) await this.save(current.filter((x) => x !== p));
    });
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async save(list: string[]): Promise<void> {
    this.list = list;
    this.hooks.onChange?.([...list]);
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, JSON.stringify({ version: 1, files: list }, null, 2));
  }

  private async load(): Promise<string[]> {
    if (this.list === null) this.list = await this.read();
    return this.list;
  }

  private async read(): Promise<string[]> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch {
      return [];
    }
    try {
      const files = (JSON.parse(text) as { files?: unknown }).files;
      if (!Array.isArray(files)) return [];
      return files.filter((f): f is string => typeof f === 'string' && path.isAbsolute(f)).slice(0, this.max);
    } catch {
      return [];
    }
  }
}
