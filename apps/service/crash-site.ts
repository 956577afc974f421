// Where a build was when its worker died. Events still queued in the native layer die with the
// worker, so the stream cannot say it; the native layer keeps the open phase path in a small
// record file outside the process (the path comes in the worker's start request), and the host
// reads it here once the worker has died abnormally.
//
// The record: UTF-8 text, one open phase name per line, outermost first, the phase open deepest
// last. An empty file means nothing was open. A name never contains a line break (the writer
// replaces them), and a trailing NUL padding (a fixed-size memory-mapped file) is ignored.
import * as fs from 'node:fs';

/** Upper bound on what is read: a phase path is a handful of short names. */
const MAX_RECORD_BYTES = 64 * 1024;
const MAX_DEPTH = 256;

/**
 * The open phase path the record holds, outermost first; undefined when there is no record (the
 * native layer had none to write, or the file is gone) or it cannot be read. The record is
 * deleted after reading: it belongs to one build.
 */
export function readCrashSite(file: string): string[] | undefined {
  let text: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(MAX_RECORD_BYTES);
      const n = fs.readSync(fd, buf, 0, MAX_RECORD_BYTES, 0);
      text = buf.subarray(0, n).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  } finally {
    removeCrashRecord(file);
  }
  const nul = text.indexOf('\0');
  if (nul >= 0) text = text.slice(0, nul);
  const names = text
    .split(/\r?\n/)
    .map((l) => l.replace(/[\u0000-\u001f\u007f]/g, '').trim())
    .filter((l) => l !== '');
  return names.slice(0, MAX_DEPTH);
}

/** Removes a build's crash record (after a normal end, or after reading it); a missing one is fine. */
export function removeCrashRecord(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // A record we cannot remove is a few bytes in the temp folder; not worth failing a build for.
  }
}

/** "Building engine › … › Timing tactics": the path as the error message and the UI show it. */
export function formatCrashSite(names: readonly string[]): string {
  return names.join(' › ');
}
