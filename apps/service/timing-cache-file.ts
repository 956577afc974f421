// What a timing-cache path must be before a build may use it, and later replace it: absent (the
// build creates it), or a regular file that is a timing cache. Anything else is refused here,
// before a build is queued, so that a build never overwrites a model or a config and never
// hangs opening a FIFO.
//
// The content check is a heuristic for TensorRT, whose cache format is not documented: a file is
// refused only when it is recognisably something else (an ONNX model, an engine, text such as
// JSON/YAML/a config, or a handful of common binary formats). The native layer makes the real
// check when it reads the file (TensorRT itself, or the simulated backend's header). For the
// simulated backend the check is exact: its caches start with the header "TBSSIMTC".
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BackendName } from '../shared/protocol.js';
import { ServiceError } from './api.js';
import { kindOf, untrustedFolder } from './output-target.js';
import { checkParentDir, probeWritable, refusePlanted } from './writable-path.js';

/** The simulated backend's cache header (native/src/sim/sim_timing_cache.cc). */
export const SIM_TIMING_CACHE_MAGIC = 'TBSSIMTC';
/** Same cap as the native cache store: far above any real timing cache. */
export const MAX_TIMING_CACHE_BYTES = 2 * 1024 ** 3;
/** How much of the file the content heuristic reads. */
const HEAD_BYTES = 4096;

const bad = (msg: string) => new ServiceError('bad_input', msg);

/** First bytes of a regular file, opened without blocking so that a FIFO swapped in cannot hang us. */
function readHead(file: string): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw bad(`timing cache ${file} is ${kindOf(st)}, not a regular file`);
    const buf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
    const n = buf.length > 0 ? fs.readSync(fd, buf, 0, buf.length, 0) : 0;
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

function readVarint(b: Buffer, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let i = 0; i < 10 && at + i < b.length; i++) {
    const byte = b[at + i];
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return null;
}

// ModelProto field numbers and their wire types (0 = varint, 2 = length-delimited).
const ONNX_MODEL_FIELDS = new Map<number, number>([
  [2, 2],
  [3, 2],
  [4, 2],
  [5, 0],
  [6, 2],
  [7, 2],
  [8, 2],
  [14, 2],
  [20, 2],
  [25, 2],
  [26, 2],
]);

/**
 * An ONNX model is a protobuf ModelProto whose writers put `ir_version` (field 1, a small varint)
 * first, followed by another ModelProto field with the right wire type.
 */
function looksLikeOnnx(head: Buffer): boolean {
  if (head.length < 4 || head[0] !== 0x08) return false;
  const ir = readVarint(head, 1);
  if (!ir || ir.value < 1 || ir.value > 100) return false;
  const tag = readVarint(head, ir.next);
  if (!tag) return false;
  return ONNX_MODEL_FIELDS.get(Math.floor(tag.value / 8)) === tag.value % 8;
}

/** Printable UTF-8 with no NUL and no control characters but whitespace: a text file. */
function looksLikeText(head: Buffer): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  let text: string;
  try {
    // stream: a multi-byte character cut at the end of the head is not an error.
    text = new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
  } catch {
    return false;
  }
  return !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
}

const startsWith = (head: Buffer, at: number, sig: string | number[]) =>
  Buffer.from(typeof sig === 'string' ? Buffer.from(sig, 'latin1') : sig).equals(head.subarray(at, at + sig.length));

/** Formats a timing cache is never in, by their signatures; null when none matches. */
function foreignFormat(head: Buffer): string | null {
  if (startsWith(head, 0, 'TRT-BUILD-STUDIO SIMULATED ENGINE')) return 'an engine file of the simulated backend';
  // TensorRT plan files carry the tag "ftrt" in their first bytes (observed, not documented).
  if (startsWith(head, 0, 'ftrt') || startsWith(head, 4, 'ftrt')) return 'a TensorRT engine';
  if (looksLikeOnnx(head)) return 'an ONNX model';
  if (startsWith(head, 0, [0x7f, 0x45, 0x4c, 0x46])) return 'an ELF executable or library';
  if (startsWith(head, 0, [0x50, 0x4b, 0x03, 0x04])) return 'a ZIP archive (e.g. a PyTorch checkpoint)';
  if (startsWith(head, 0, [0x1f, 0x8b])) return 'a gzip archive';
  if (startsWith(head, 0, [0x89, 0x50, 0x4e, 0x47])) return 'a PNG image';
  if (startsWith(head, 0, [0x89, 0x48, 0x44, 0x46])) return 'an HDF5 file';
  if (startsWith(head, 0, [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59])) return 'a NumPy array';
  if (head.length >= 10 && head[8] === 0x7b && head[9] === 0x22 && head.readBigUInt64LE(0) < 100_000_000n) return 'a safetensors file';
  // Named by kind only: the file may be a secret (a key, /etc/shadow), and this message travels
  // to every surface (HTTP, MCP, the language server, logs), so none of its bytes are quoted.
  if (looksLikeText(head)) return 'a text file (timing caches are binary)';
  return null;
}

function checkContent(file: string, head: Buffer, backend: BackendName | 'auto' | undefined): void {
  if (head.length === 0) return; // an empty file is an empty cache: nothing to lose
  const isSimCache = startsWith(head, 0, SIM_TIMING_CACHE_MAGIC);
  // Something recognisably else is named as such first, whatever the backend.
  const what = isSimCache ? undefined : foreignFormat(head);
  if (what) throw bad(`timing cache ${file} is not a timing cache: it looks like ${what}. Give a new path, or remove the file if it is disposable`);
  if (backend === 'simulated' && !isSimCache) {
    throw bad(
      `timing cache ${file} is not a simulated timing cache (it does not start with "${SIM_TIMING_CACHE_MAGIC}"). ` + 'Give a new path, or remove the file if it is disposable',
    );
  }
  if (isSimCache) {
    if (backend === 'tensorrt') {
      throw bad(`timing cache ${file} is a timing cache of the simulated backend; TensorRT cannot use it. Give another path`);
    }
    return;
  }
}

/**
 * Throws ServiceError('bad_input') unless `cachePath` (absolute) may serve as a timing cache:
 * absent in a writable folder, or a regular file of at most 2 GiB that is not recognisably
 * something else. Pass the build's backend when it is known: for the simulated backend the file
 * must carry that backend's header; for TensorRT, a simulated cache is refused.
 */
export function checkTimingCacheFile(cachePath: string, backend?: BackendName | 'auto'): void {
  refusePlanted(cachePath, 'timing cache');
  refusePlanted(`${cachePath}.lock`, "timing cache's lock file");
  let lst: fs.Stats;
  try {
    lst = fs.lstatSync(cachePath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw bad(`timing cache ${cachePath} cannot be examined (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    checkParentDir(cachePath, 'timing cache');
    probeWritable(path.dirname(cachePath), 'timing cache');
    return;
  }
  const link = lst.isSymbolicLink() ? ` (a symbolic link to ${fs.readlinkSync(cachePath)})` : '';
  let st: fs.Stats;
  try {
    st = fs.statSync(cachePath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw bad(`timing cache ${cachePath} is a symbolic link to a missing file (${fs.readlinkSync(cachePath)})`);
    throw bad(`timing cache ${cachePath}${link} cannot be examined (${code ?? (e as Error).message})`);
  }
  if (link) refusePlanted(fs.realpathSync(cachePath), 'timing cache');
  if (!st.isFile()) {
    throw bad(
      `timing cache ${cachePath} is ${link ? `a symbolic link to ${kindOf(st)} (${fs.readlinkSync(cachePath)})` : kindOf(st)}, ` +
        'not a regular file: a timing cache must be a regular file, or not exist yet',
    );
  }
  if (st.size > MAX_TIMING_CACHE_BYTES) {
    throw bad(`timing cache ${cachePath}${link} is ${st.size} bytes, above the 2 GiB limit for a timing cache (is it the right file?)`);
  }
  let head: Buffer;
  try {
    head = readHead(cachePath);
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    throw bad(`timing cache ${cachePath}${link} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  checkContent(cachePath, head, backend);
  // The build replaces the file by renaming a new one into its folder.
  const dir = path.dirname(fs.realpathSync(cachePath));
  const why = untrustedFolder(dir, fs.statSync(dir));
  if (why) throw bad(`cannot write the timing cache ${cachePath}: ${why}`);
  probeWritable(dir, 'timing cache');
}
