// The short form of how a build ended, for the one-line status bar: the full message (a crash's
// is three clauses and the worker's last output) stays one click away, in the build summary and
// the log. Pure, so it is tested without a DOM.
import type { BuildFinished } from '../../shared/protocol.js';
import { crashSite } from '../../shared/view-format.js';

/** Longest short form before it is cut at a word boundary. */
const SHORT_MAX = 72;

/**
 * "crashed in Preparing graph for optimization (signal SIGSEGV)": the deepest phase of the crash
 * site and how the worker ended; otherwise the message's first clause, cut at a word with "…".
 */
export function shortOutcomeText(o: Pick<BuildFinished, 'status' | 'error' | 'lastPhasePath'>): string | undefined {
  const error = o.error;
  const site = crashSite(o as BuildFinished);
  if (site) {
    const how = error ? /\((signal \w+|exit code -?\d+|code -?\d+)\)/.exec(error)?.[1] : undefined;
    return `crashed in ${site[site.length - 1]}${how ? ` (${how})` : ''}`;
  }
  if (!error) return undefined;
  const first = error.split(/; |\n/)[0];
  if (first.length <= SHORT_MAX) return first;
  const cut = first.slice(0, SHORT_MAX);
  const space = cut.lastIndexOf(' ');
  let head = space > SHORT_MAX / 2 ? cut.slice(0, space) : cut;
  // Not "(fault…": a parenthesis the cut would leave open goes, with what it began.
  const open = head.lastIndexOf('(');
  if (open > SHORT_MAX / 2 && head.indexOf(')', open) < 0) head = head.slice(0, open);
  return `${head.trimEnd().replace(/[,:;.]$/, '')}…`;
}
