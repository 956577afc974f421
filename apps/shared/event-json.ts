// The JSON text of a build event, written once per event on its way through the service. The
// build worker already turns every event into JSON for its IPC message (apps/shared/event-lines.ts):
// where the service holds exactly the event that text describes (the object parsed from it,
// unchanged), the SSE stream and the CLI's --json output send that text instead of stringifying
// the event again. At 10^5 events/s that second JSON.stringify was a sixth of serve's CPU.
//
// Only an event the service did not change may carry text: an annotated copy (a heartbeat with a
// predicted end, build.started with the memory estimate, the service's build.finished) is a new
// object and has none, so it is stringified as it is. Events are never mutated after they are
// taken in (the view, the log and subscribers only read them), which is what makes this sound.
// The text is kept only while the event goes out live (forgetEventJson after the fan-out).
import type { BuildEvent } from './protocol.js';

/**
 * The text rides on the event object itself, under a symbol and not enumerable: JSON.stringify,
 * structured clone, object spread and deep-equality in tests all ignore it, so the event is the
 * same event everywhere. (A WeakMap from event to text cost more than the stringify it saved:
 * an ephemeron per event at 10^5 events/s kept the collector busy.)
 */
const TEXT = Symbol('eventJson');

type WithText = BuildEvent & { [TEXT]?: string };

/**
 * `text` is the JSON of `ev` on one line (no CR or LF: SSE frames by lines); callers check that.
 */
export function rememberEventJson(ev: BuildEvent, text: string): void {
  Object.defineProperty(ev, TEXT, { value: text, writable: true, enumerable: false, configurable: false });
}

/**
 * Lets the text go once the event has gone out live (BuildFeed.push): the events kept for
 * replay then cost what their objects do, not their text too. A later replay stringifies.
 */
export function forgetEventJson(ev: BuildEvent): void {
  if ((ev as WithText)[TEXT] !== undefined) (ev as WithText)[TEXT] = undefined;
}

/** The event's JSON text on one line: the worker's, when it came with one, else JSON.stringify. */
export function eventJson(ev: BuildEvent): string {
  return (ev as WithText)[TEXT] ?? JSON.stringify(ev);
}
