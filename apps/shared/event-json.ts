// The JSON text of a build event, written once per event on its way through the service. The
// build worker already turns every event into JSON for its IPC message (apps/worker/event-lines.ts):
// where the service holds exactly the event that text describes (the object parsed from it,
// unchanged), the SSE stream and the CLI's --json output send that text instead of stringifying
// the event again. At 10^5 events/s that second JSON.stringify was a sixth of serve's CPU.
//
// Only an event the service did not change may carry text: an annotated copy (a heartbeat with a
// predicted end, build.started with the memory estimate, the service's build.finished) is a new
// object and has none, so it is stringified as it is. Events are never mutated after they are
// taken in (the view, the log and subscribers only read them), which is what makes this sound.
import type { BuildEvent } from './protocol.js';

const texts = new WeakMap<object, string>();

/**
 * `text` is the JSON of `ev` on one line (no CR or LF: SSE frames by lines); callers check that.
 * Kept only as long as the event object is.
 */
export function rememberEventJson(ev: BuildEvent, text: string): void {
  texts.set(ev, text);
}

/** The event's JSON text on one line: the worker's, when it came with one, else JSON.stringify. */
export function eventJson(ev: BuildEvent): string {
  return texts.get(ev) ?? JSON.stringify(ev);
}
