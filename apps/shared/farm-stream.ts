// The farm view's live stream (GET /api/farm/events), framed like a build's event stream
// (docs/http-api.md): Server-Sent Events, heartbeat comments, the end of the response when the
// server shuts down. Each message is `event: farm`, `id: <version>`, data = a complete FarmStatus
// (apps/shared/farm-status.ts): the status at connect, then a new one whenever it changed,
// coalesced to one every FARM_STREAM_MIN_INTERVAL_MS at most. A message replaces the one before,
// so there is nothing to resume: a client that reconnects simply gets the status as it is then.
// Shared by the service (formatting, change detection) and clients (parsing). Pure: no I/O.
import type { FarmStatus } from './farm-status.js';

export const FARM_STREAM_EVENT = 'farm';
/** Changes closer together than this go out as one message (the latest status). */
export const FARM_STREAM_MIN_INTERVAL_MS = 250;

export function formatFarmMessage(version: number, status: FarmStatus): string {
  return `event: ${FARM_STREAM_EVENT}\nid: ${version}\ndata: ${JSON.stringify(status)}\n\n`;
}

/**
 * What the farm view shows, apart from when it was read: two statuses with the same key look
 * the same. A worker's heartbeat counts by when it happened (the status's time less its age), so
 * a new heartbeat is a change and the mere passing of time is not.
 */
export function farmStatusKey(s: FarmStatus): string {
  const at = Date.parse(s.at);
  return JSON.stringify({
    ...s,
    at: undefined,
    workers: s.workers.map((w) => ({ ...w, lastHeartbeatMsAgo: w.lastHeartbeatMsAgo === null ? null : at - w.lastHeartbeatMsAgo })),
  });
}

/** Why `value` (a message's parsed data) is not a FarmStatus a view can show; undefined when it is. */
export function farmStatusProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not an object';
  const v = value as Partial<Record<keyof FarmStatus, unknown>>;
  if (typeof v.at !== 'string') return 'no "at"';
  for (const k of ['workers', 'pools', 'running', 'recent'] as const) if (!Array.isArray(v[k])) return `"${k}" is not a list`;
  return undefined;
}
