// A build worker's message as the service reads it (apps/service/worker-run.ts): validated, and
// an `eventLines` batch decoded into the `events` it carries, so tests look at events either way.
import { decodeEventLines } from '../../apps/shared/event-lines.js';
import { WorkerToParent } from '../../apps/worker/messages.js';

export function readWorkerMessage(raw: unknown): WorkerToParent {
  const msg = WorkerToParent.parse(raw);
  if (msg.type !== 'eventLines') return msg;
  const decoded = decodeEventLines(msg.lines);
  if ('error' in decoded) throw new Error(`the worker sent invalid event lines: ${decoded.error}`);
  return { type: 'events', events: decoded.events };
}
