// The file name an engine gets when nobody names one: `<model>.<gpu or "sim">.<TensorRT version>.engine`.
// Shared by the service (which writes engines under it) and the "Copy as trtexec command" (whose
// --saveEngine must name the same file), so the two can never drift apart. Pure: no Node imports
// (the renderer uses it), so the short hash is FNV-1a rather than a crypto digest: it only has to
// keep two long names apart, not resist anyone.
import { ATOMIC_TEMP_SUFFIX_MAX_BYTES, clipUtf8, fitStem, NAME_MAX_BYTES, utf8Length } from './file-names.js';
import type { BackendInfo } from './protocol.js';

/** Device (GPU name) and version come from the machine: bounded so that a model name always has room. */
const DEVICE_MAX_BYTES = 64;
const VERSION_MAX_BYTES = 32;

// The joiner and variation selector are listed on their own on purpose: they stay wherever they are.
// eslint-disable-next-line no-misleading-character-class
const UNSAFE_IN_NAME = /[^\p{L}\p{M}\p{N}\p{Extended_Pictographic}\p{Emoji_Modifier}\u200d\ufe0f._+ -]+/gu;

/**
 * A name part safe in any file system: no separators, controls or shell-hostile characters.
 * Letters with their combining marks and emoji (with their modifiers and joiners) stay.
 */
export function engineNamePart(s: string): string {
  return (
    s
      .replace(UNSAFE_IN_NAME, '-')
      .replace(/\s+/g, ' ')
      .replace(/^[-. ]+|[-. ]+$/g, '') || 'x'
  );
}

/** 32-bit FNV-1a of the UTF-8 bytes, as 8 hex digits. */
export function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * `<model>.<gpu or "sim">.<TensorRT version>.engine` for a model known by `baseName` (a file name
 * without its folder), built on `backend`. The simulator's output says "sim": it is not an engine
 * to deploy. With `suffix`, `-<suffix>` goes before ".engine" (a name taken).
 *
 * The whole name fits the file system's 255 bytes with room for the native layer's temporary
 * suffix (the engine is written to `<name>.tmp-<pid>-<n>` first): a model name too long for that
 * is cut between characters and marked with a hash of the whole stem (fitStem), so two long names
 * that differ only at the end still get two files. The device, version and extension stay.
 */
export function engineFileName(baseName: string, backend: BackendInfo, suffix?: string): string {
  const stem = engineNamePart(baseName.replace(/\.onnx$/i, ''));
  const device = backend.name === 'simulated' ? 'sim' : engineNamePart(clipUtf8((backend.gpu?.name ?? 'gpu').replace(/^NVIDIA\s+/i, ''), DEVICE_MAX_BYTES)).replace(/ /g, '-');
  const version = engineNamePart(
    clipUtf8(backend.name === 'simulated' ? (backend.emulates ?? backend.version ?? 'unknown') : (backend.library?.version ?? backend.version ?? 'unknown'), VERSION_MAX_BYTES),
  );
  const rest = `.${device}.${version}${suffix !== undefined ? `-${engineNamePart(suffix)}` : ''}.engine`;
  const room = NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES - utf8Length(rest);
  return `${fitStem(stem, room, shortHash(stem))}${rest}`;
}
