// A model the service refused, as the page shows it. The service's refusal is a short first line
// (what, where, how many) and then one problem a line ("  1. node … reads …"): the first line is
// what the page says, the problems are a list one opens. Other model errors (a file that cannot
// be read) are one line and have no list.
import type { UiStatus } from '../store/live-build.js';

export interface ModelErrorParts {
  head: string;
  /** The numbered problems, numbers taken off (the list numbers them). */
  problems: string[];
  /** Other lines under the first ("… and 3 more problems", a hint). */
  notes: string[];
}

const NUMBERED = /^\s*\d+\.\s+/;
/**
 * Line breaks: real ones, and the "\n" escapes the HTTP error body makes of them (sendError runs
 * the whole message through displayMessage, which escapes control characters) where a list line
 * follows ("\n  1. …", "\n  … and 2 more"), so an escaped break inside a quoted name stays text.
 */
const BREAK = /\n|\\n(?= {2}(?:\d+\. |… ))/;

export function modelErrorParts(message: string): ModelErrorParts {
  const [head, ...rest] = message.split(BREAK);
  const lines = rest.filter((l) => l.trim() !== '');
  return {
    head,
    problems: lines.filter((l) => NUMBERED.test(l)).map((l) => l.replace(NUMBERED, '')),
    notes: lines.filter((l) => !NUMBERED.test(l)).map((l) => l.trim()),
  };
}

/**
 * The word the status line shows: the build's status, or "Model refused" while no build is on
 * screen and the model panel shows why the model was refused. A page state, not a build state:
 * the build's own status (UiStatus) never holds it.
 */
export type PageStatus = UiStatus | 'Model refused';

export function pageStatus(build: UiStatus, modelError: string | null): PageStatus {
  return build === 'Idle' && modelError ? 'Model refused' : build;
}
