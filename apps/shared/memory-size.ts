// Memory sizes as users type them ("20G", "512MiB", "1.5T") and as we write them ("21.5 GiB").
// Imports nothing that imports the protocol, so the protocol's schemas can use it.
import { formatBytes } from './format.js';

const UNITS: Record<string, number> = { '': 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };

/**
 * Bytes from "20G", "20 GiB", "1.5t", "512M", "4096" (bytes). K/M/G/T/P are binary (2^10...),
 * with or without "i" and "B" ("GB" too: memory is sized in binary units, as `free -g` does).
 * Throws a message that says what a valid size looks like.
 */
export function parseMemorySize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b)?\s*$/i.exec(text);
  const bad = () => new Error(`invalid memory size "${text}": expected a number with an optional unit, e.g. 512M, 20G, 1.5T (binary units)`);
  if (!m) throw bad();
  const unit = m[2].toLowerCase();
  if (m[3] && !unit && m[3].toLowerCase() === 'ib') throw bad();
  const bytes = Math.round(Number(m[1]) * UNITS[unit]);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw bad();
  return bytes;
}

/** A memory limit: bytes, or "auto" (what the worker may use, from its cgroup and MemAvailable). */
export function parseMemoryLimit(text: string): number | 'auto' {
  return text.trim().toLowerCase() === 'auto' ? 'auto' : parseMemorySize(text);
}

/** "20 GiB", "21.5 GiB", "1.5 GiB": formatBytes without trailing zeros. */
export function formatMemory(bytes: number): string {
  return formatBytes(bytes)
    .replace(/\.0+ /, ' ')
    .replace(/(\.\d*?)0+ /, '$1 ');
}
