// File names measured the way file systems measure them (bytes of UTF-8, not characters), cut
// without breaking a character, and split for showing in a narrow cell. Pure: every surface uses it.

/** Linux file systems (ext4, xfs, btrfs, tmpfs) allow this many bytes in one path component. */
export const NAME_MAX_BYTES = 255;

/**
 * What the native layer appends to a file it writes atomically: `<path>.tmp-<pid>-<n>`
 * (native/src/core/atomic_file.cc, makeTempPath). The pid is a pid_t (a 32-bit int: at most 10
 * digits) and n a per-process uint64 counter (at most 20 digits), so 5 + 10 + 1 + 20 bytes is the
 * most it can ever add. A final name longer than NAME_MAX_BYTES minus this could fail with
 * ENAMETOOLONG when the temp file is created, i.e. after the whole build.
 */
export const ATOMIC_TEMP_SUFFIX_MAX_BYTES = '.tmp-'.length + 10 + 1 + 20;

/**
 * The longest name the native timing-cache store derives from a cache path
 * (native/src/core/cache_store.cc): a sidecar `<cache>.pending-<pid>-<n>` (pid_t and a uint64
 * counter), itself written atomically, so plus the temp suffix above. Its other names are shorter:
 * `<cache>.lock`, `<cache>.corrupt-<n>` (n < 1000) plus a temp suffix, `<sidecar>.rejected`.
 */
export const TIMING_CACHE_SUFFIX_MAX_BYTES = '.pending-'.length + 10 + 1 + 20 + ATOMIC_TEMP_SUFFIX_MAX_BYTES;

const encoder = new TextEncoder();

export function utf8Length(s: string): number {
  return encoder.encode(s).length;
}

/** User-perceived characters when the runtime can tell them, else code points (never half a surrogate pair). */
function characters(s: string): string[] {
  const Segmenter = (Intl as { Segmenter?: typeof Intl.Segmenter }).Segmenter;
  if (Segmenter) return Array.from(new Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (g) => g.segment);
  return Array.from(s);
}

/**
 * The longest start of `s` that fits `maxBytes` of UTF-8, cut between characters: never inside a
 * multi-byte character or a surrogate pair, nor (where Intl.Segmenter exists) between an emoji and
 * its modifiers or a letter and its combining accents.
 */
export function clipUtf8(s: string, maxBytes: number): string {
  if (utf8Length(s) <= maxBytes) return s;
  let out = '';
  let used = 0;
  for (const ch of characters(s)) {
    const n = utf8Length(ch);
    if (used + n > maxBytes) break;
    out += ch;
    used += n;
  }
  return out;
}

/**
 * `stem` when it fits `maxBytes`, else its start and `-<hash>`, in at most `maxBytes` bytes. The
 * hash (of the whole stem, made by the caller) keeps two long names that share their start apart.
 */
export function fitStem(stem: string, maxBytes: number, hash: string): string {
  if (utf8Length(stem) <= maxBytes) return stem;
  const mark = `-${hash}`;
  const head = clipUtf8(stem, Math.max(0, maxBytes - utf8Length(mark))).replace(/[-. ]+$/, '');
  return `${head}${mark}`;
}

/** The last path component, for '/' and '\\' paths alike. */
export function baseName(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}

/** East Asian wide characters and emoji take two columns of a narrow cell. */
const WIDE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff60\uffe0-\uffe6\p{Extended_Pictographic}]/u;

/**
 * A file name cut in two for a one-line cell: `head` may be elided at its end (CSS ellipsis), `tail`
 * is always shown, so a long name reads "resnet50-…-v2.onnx": the extension and the last `columns`
 * columns of the stem (a wide character counts two), which tell versions of a model apart.
 */
export function splitForMiddleEllipsis(name: string, columns = 6): { head: string; tail: string } {
  const dot = name.lastIndexOf('.');
  // An extension is a short last part; "a.b.c-very long part" has none worth keeping whole.
  const ext = dot > 0 && characters(name.slice(dot)).length <= 12 ? name.slice(dot) : '';
  const stem = characters(name.slice(0, name.length - ext.length));
  let cut = stem.length;
  for (let used = 0; cut > 0 && used < columns;) used += WIDE.test(stem[--cut]) ? 2 : 1;
  return { head: stem.slice(0, cut).join(''), tail: stem.slice(cut).join('') + ext };
}

/**
 * Whether a model path means something to the user. In the desktop app it is the file they opened.
 * In the browser it is the server's copy of an upload (a generated name in a temporary folder),
 * unless the model was named by its path on the server, and then the file keeps its own name.
 */
export function isUserPath(p: string, displayName: string, host: 'electron' | 'web'): boolean {
  return host === 'electron' || baseName(p) === displayName;
}

/** A model's tooltip: the name the user knows it by, and its path when that means something to them. */
export function modelTooltip(p: string, displayName: string, host: 'electron' | 'web'): string {
  return isUserPath(p, displayName, host) && p !== displayName ? `${displayName}\n${p}` : displayName;
}
