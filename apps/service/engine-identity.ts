// The engine file a build wrote, as it was when the build finished: device, inode, size and
// modification time. Before an engine is served or listed as a build's, the file at its path is
// compared with this record, so a file replaced afterwards (by another user, a later build
// outside this service, an editor) is never handed out or attributed as the build's.
// Deliberately small and separate from any content hash (a manifest with the engine's sha256 can
// sit beside it): stat(2) is free, hashing a multi-GiB engine on every listing is not.
import * as fs from 'node:fs';

export interface EngineRecord {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export function engineRecordOf(st: fs.Stats): EngineRecord {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * The record of the regular file at `file` (a symbolic link followed), or undefined when there is
 * none. `expectedBytes`: the size the build reported; a file of another size is not its engine.
 */
export function recordEngine(file: string, expectedBytes?: number): EngineRecord | undefined {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return undefined;
    if (expectedBytes !== undefined && st.size !== expectedBytes) return undefined;
    return engineRecordOf(st);
  } catch {
    return undefined;
  }
}

export function isRecordedEngine(st: fs.Stats, rec: EngineRecord | undefined): boolean {
  return rec !== undefined && st.isFile() && st.dev === rec.dev && st.ino === rec.ino && st.size === rec.size && st.mtimeMs === rec.mtimeMs;
}

/** `file` when it is still the file `rec` describes, else undefined. */
export function recordedEnginePath(file: string | undefined, rec: EngineRecord | undefined): string | undefined {
  if (!file || !rec) return undefined;
  try {
    return isRecordedEngine(fs.statSync(file), rec) ? file : undefined;
  } catch {
    return undefined;
  }
}
