// Reads the crash record a worker's native layer keeps while a build runs: the open phase path at
// the moment the worker died. The worker maps the file MAP_SHARED and writes the path on every
// phase start and finish; the kernel keeps those pages when the process is killed, so the file
// holds the last path written even after a SIGABRT or SIGKILL.
//
// Layout (little-endian, version 1):
//   header [0, 64): "TBSCRASH" | u32 version | u32 slotCount | u32 slotSize | zeros
//   slot i [64 + i*slotSize, +slotSize): u64 seqBegin | u32 depth | u32 textBytes |
//          text: UTF-8 phase names joined by "\n", outermost first | ... | u64 seqEnd (last 8 bytes)
// A slot is complete when seqBegin == seqEnd != 0; a write interrupted by the crash leaves its
// slot incomplete, and the newest complete slot is the answer.
import { readFileSync, rmSync } from 'node:fs';

const MAGIC = 'TBSCRASH';
const VERSION = 1;
const HEADER_BYTES = 64;
const SLOT_PREFIX_BYTES = 16;

/**
 * The deepest open phase path (outermost first) recorded in `file`, or undefined when the file is
 * missing, is not a crash record, holds no complete slot, or recorded that no phase was open.
 * Never throws and deletes nothing.
 */
export function readCrashSite(file: string): string[] | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 8) !== MAGIC || buf.readUInt32LE(8) !== VERSION) return undefined;
  const slots = buf.readUInt32LE(12);
  const slotSize = buf.readUInt32LE(16);
  if (slots === 0 || slots > 64 || slotSize < SLOT_PREFIX_BYTES + 8 || slotSize > 1 << 20) return undefined;
  let best: { seq: bigint; names: string[] } | undefined;
  for (let i = 0; i < slots; i++) {
    const at = HEADER_BYTES + i * slotSize;
    if (at + slotSize > buf.length) break; // a short file: only the slots it holds
    const begin = buf.readBigUInt64LE(at);
    const end = buf.readBigUInt64LE(at + slotSize - 8);
    if (begin === 0n || begin !== end || (best && begin <= best.seq)) continue;
    const depth = buf.readUInt32LE(at + 8);
    const bytes = buf.readUInt32LE(at + 12);
    if (bytes > slotSize - SLOT_PREFIX_BYTES - 8) continue;
    const text = buf.toString('utf8', at + SLOT_PREFIX_BYTES, at + SLOT_PREFIX_BYTES + bytes);
    const names = depth === 0 ? [] : text.split('\n');
    if (names.length !== depth) continue; // inconsistent: not a slot this writer completed
    best = { seq: begin, names };
  }
  return best && best.names.length > 0 ? best.names : undefined;
}

/** Removes a build's crash record (after a normal end, or after reading it); a missing one is fine. */
export function removeCrashRecord(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // A record we cannot remove is a few bytes in the temp folder; not worth failing a build for.
  }
}

/** "Building engine › … › Timing tactics": the path as the error message and the UI show it. */
export function formatCrashSite(names: readonly string[]): string {
  return names.join(' › ');
}
