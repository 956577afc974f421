// Text that came from outside (a model's tensor names, op types, producer, an error quoting them)
// made safe to print on a terminal or into a log: control characters and bidirectional overrides
// are written out visibly instead of acting. A name with ESC could otherwise recolour or clear the
// screen, a carriage return could overwrite the line, and U+202E could make "gpj.exe" read "exe.jpg".
//
// Pure (no Node or DOM imports) so every surface can use it. JSON output does not need it: JSON
// has its own escaping, and an exact round trip matters more there.

/** C0 controls, DEL, C1 controls, the line and paragraph separators (a new line to many editors), and the bidi embeddings/overrides/isolates and marks. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `s` with every control character (\x00–\x1f, \x7f–\x9f), U+2028/9 and bidi control (U+061C, U+200E/F,
 * U+202A–U+202E, U+2066–U+2069) replaced by a visible escape: \n, \r, \t, \xHH or \uHHHH.
 * Everything else, including backslashes and any other Unicode, is left as it is.
 */
export function displayText(s: string): string {
  return s.replace(UNSAFE, escape);
}

/** A run of characters without white space longer than this (a path, a name) is cut. */
export const MAX_DISPLAY_VALUE = 300;
/** A message longer than this (after values are cut) is cut. */
export const MAX_DISPLAY_MESSAGE = 4000;

const LONG_VALUE = new RegExp(`\\S{${MAX_DISPLAY_VALUE + 1},}`, 'g');

function cut(s: string, keep: number): string {
  return `${s.slice(0, keep)}… (${s.length} characters)`;
}

/**
 * A message for a person (an error line, a log line, a protocol message's text): every value in it
 * longer than MAX_DISPLAY_VALUE characters cut with its length named, the whole longer than
 * MAX_DISPLAY_MESSAGE cut the same way, and control characters escaped (displayText). A 100k
 * character path then reads `/tmp/aaaa…… (100000 characters)` instead of filling the screen.
 */
export function displayMessage(s: string): string {
  let out = s.replace(LONG_VALUE, (run) => cut(run, 120));
  if (out.length > MAX_DISPLAY_MESSAGE) out = cut(out, MAX_DISPLAY_MESSAGE - 100);
  return displayText(out);
}

/**
 * Text whose line breaks are the program's own (a stack trace) made safe line by line: the breaks
 * kept, everything a line quotes escaped and cut. Never for text that quotes input as a whole: a
 * line break from a file or a client would then pass (use displayMessage).
 */
export function displayLines(s: string): string {
  return s.split('\n').map(displayMessage).join('\n');
}
