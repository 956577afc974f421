// What one protocol event costs while it waits in a JS queue, for the byte bounds of the event
// path's hops (docs/architecture.md, "Bounds"): the worker's batcher, a subscriber's backlog. An
// estimate made to bound memory, cheap enough for every event (one switch, no serializing): a
// fixed cost for the object (its fields and V8's headers: 120 bytes measured for a phase.start
// on Node 22, rounded up) plus the text the event alone holds, at two bytes a character (V8's worst case).
// Phase names are not counted: the worker decodes each name once and every start shares it.
import { EventLine, type WireEvent } from './event-lines.js';

/** An event object in V8, with its fields. */
export const EVENT_OBJECT_BYTES = 160;
/** The rare events with nested objects (build.started, cache.stats, build.finished, ...). */
export const RARE_EVENT_BYTES = 2048;

/** An EventLine object (three fields) and its string's header, without the text. */
export const EVENT_LINE_OBJECT_BYTES = 64;

export function eventBytes(e: WireEvent): number {
  // A hot event as its text (the worker's wire form): a slice of the batch's text, which V8 keeps
  // at one byte a character (the addon writes ASCII but for phase names that are not; such a
  // line takes two a character, up to twice this estimate). Counting two for every line would
  // hold the native layer at half the memory the bound means.
  if (e instanceof EventLine) return EVENT_LINE_OBJECT_BYTES + e.line.length;
  switch (e.type) {
    case 'phase.start':
    case 'phase.step':
    case 'phase.finish':
    case 'heartbeat':
      return EVENT_OBJECT_BYTES;
    case 'log':
      return EVENT_OBJECT_BYTES + 2 * e.message.length;
    default:
      return RARE_EVENT_BYTES;
  }
}
