// Events between the build worker and its host as JSON text, one string per event (the
// `eventLines` message of messages.ts). The worker stringifies in its own process (the other
// core), the host parses a whole batch with one JSON.parse, and the text goes on to the SSE
// stream and the CLI's --json output unchanged (apps/shared/event-json.ts), so the host, the one
// thread every event crosses, neither deserializes object graphs nor stringifies them again.
//
// Validation stays what the host always did (every event against the protocol's schema): the
// three phase events that make up nearly all of a fast build are checked here by hand, exactly
// as their zod schemas check them (apps/worker/test/event-lines.test.ts holds the two to the same
// answers); anything else, or anything that does not match that exact shape, goes through zod.
import { rememberEventJson } from './event-json.js';
import { BuildEvent, describeZodError, PROTOCOL_VERSION } from './protocol.js';

/**
 * A hot event (phase.start, phase.step, phase.finish) that is already its JSON text: the native
 * layer writes it (native/src/core/event_lines.h) byte for byte as JSON.stringify would write
 * the decoded object, so the worker never makes that object nor stringifies it. It carries what
 * the pacing batcher coalesces by (type, phase id) and nothing else.
 */
export class EventLine {
  constructor(
    readonly type: 'phase.start' | 'phase.step' | 'phase.finish',
    readonly id: number,
    readonly line: string,
  ) {}
}

/** What travels through the worker's hop: an event object, or a hot event as its text. */
export type WireEvent = BuildEvent | EventLine;

/** The worker's side: one JSON line per event (JSON.stringify never writes a raw newline). */
export function encodeEventLines(events: readonly WireEvent[]): string[] {
  const lines = new Array<string>(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    lines[i] = e instanceof EventLine ? e.line : JSON.stringify(e);
  }
  return lines;
}

const isInt = (x: unknown): boolean => Number.isSafeInteger(x);

/**
 * True when `o` is a phase.start, phase.step or phase.finish with exactly its schema's fields,
 * each of the schema's type: then zod would return an equal object, and `o` itself can be used
 * (no copy). False means "ask zod", not "invalid".
 */
export function isExactPhaseEvent(o: Record<string, unknown>): boolean {
  if (o.v !== PROTOCOL_VERSION || typeof o.buildId !== 'string' || typeof o.t !== 'number' || !isInt(o.seq) || (o.seq as number) < 0 || !isInt(o.id)) {
    return false;
  }
  // Every field below is required and checked, so the count rules out extra fields (which zod
  // would strip: the text would then say more than the event).
  let keys = 0;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) keys++;
  switch (o.type) {
    case 'phase.start':
      return keys === 10 && (o.parentId === null || isInt(o.parentId)) && typeof o.name === 'string' && isInt(o.nbSteps) && isInt(o.instance);
    case 'phase.step':
      return keys === 8 && isInt(o.step) && isInt(o.stepsDone);
    case 'phase.finish':
      return keys === 8 && isInt(o.stepsDone) && typeof o.early === 'boolean';
    default:
      return false;
  }
}

const hasLineBreak = (s: string): boolean => s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0;

/** The host's side: the events of an `eventLines` message, validated, or why they are not valid. */
export function decodeEventLines(lines: readonly string[]): { events: BuildEvent[] } | { error: string } {
  let values: unknown;
  try {
    // One parse for the batch. Each line must be exactly one value: a line holding "a,b" would
    // add one, an empty line is a syntax error here, so equal counts mean the lines line up.
    values = JSON.parse(`[${lines.join(',')}]`);
  } catch (e) {
    return { error: `an event is not JSON (${(e as Error).message})` };
  }
  if (!Array.isArray(values) || values.length !== lines.length) return { error: `${lines.length} event lines held ${Array.isArray(values) ? values.length : 0} values` };
  const events = new Array<BuildEvent>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v: unknown = values[i];
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && isExactPhaseEvent(v as Record<string, unknown>)) {
      events[i] = v as BuildEvent;
      // Pretty-printed text (legal JSON, not what the worker writes) would break SSE's framing.
      if (!hasLineBreak(lines[i])) rememberEventJson(events[i], lines[i]);
      continue;
    }
    const parsed = BuildEvent.safeParse(v);
    if (!parsed.success) return { error: `event ${i + 1} of ${lines.length}: ${describeZodError(parsed.error)}` };
    events[i] = parsed.data;
  }
  return { events };
}
