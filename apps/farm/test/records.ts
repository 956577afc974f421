// What the farm's Redis tests write by hand: a queued build's record and the events they append.
import { PROTOCOL_VERSION, type BuildEvent } from '../../shared/protocol.js';
import type { FarmRecord } from '../farm-store.js';

/** A simulated build's record as serve writes it when the build is queued. */
export function queuedRecord(id: string): FarmRecord {
  return {
    id,
    state: 'queued',
    modelPath: '/m.onnx',
    options: { backend: 'simulated' },
    queuedAt: new Date().toISOString(),
    lastSeq: -1,
    engineAvailable: false,
    farm: { target: {}, attempt: 1, retries: 0 },
  };
}

/** A log event (its seq is the writer's; the farm store numbers what it appends). */
export const logEvent = (buildId: string, message: string, seq = 0): BuildEvent => ({ v: PROTOCOL_VERSION, buildId, seq, t: 0, type: 'log', severity: 'info', message });
