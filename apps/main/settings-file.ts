// <userData>/settings.json is shared by several modules (save-folders.ts, trt-location.ts), each
// owning its own keys. Updates are read-modify-write, so they are serialised per file here (two
// modules writing at once would otherwise drop each other's change) and written atomically.
import { promises as fs } from 'node:fs';
import { writeFileAtomic } from './atomic-file.js';

export type SettingsObject = Record<string, unknown>;

const queues = new Map<string, Promise<unknown>>();

export async function readSettings(file: string): Promise<SettingsObject> {
  try {
    const v: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as SettingsObject) : {};
  } catch {
    return {};
  }
}

/** Applies `change` to the current settings and writes them back, one update per file at a time. */
export function updateSettings(file: string, change: (s: SettingsObject) => void): Promise<void> {
  const next = (queues.get(file) ?? Promise.resolve()).then(async () => {
    const s = await readSettings(file);
    change(s);
    await writeFileAtomic(file, `${JSON.stringify(s, null, 2)}\n`);
  });
  queues.set(
    file,
    next.catch(() => undefined),
  );
  return next;
}
