// Server-Sent Events for one build: a snapshot first (a late subscriber sees the current tree),
// then every event with `id:` = seq so EventSource's Last-Event-ID resume works, heartbeat
// comments to keep proxies and idle timers from cutting a silent build, and the end of the
// response after build.finished.
import type * as http from 'node:http';
import type { BuildServiceApi, Subscription } from '../api.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { HttpError } from './errors.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A client this far behind is cut off; it reconnects with Last-Event-ID and resumes cleanly. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);

export interface EventStreamOptions {
  heartbeatMs: number;
  /** Enders of the streams still open; the server calls them on shutdown. */
  open: Set<() => void>;
}

/** `Last-Event-ID` header, else `?lastEventId=`; -1 replays everything the service retains. */
export function parseLastEventId(req: http.IncomingMessage, query: URLSearchParams): number | undefined {
  const header = req.headers['last-event-id'];
  const raw = typeof header === 'string' && header.trim() !== '' ? header.trim() : query.get('lastEventId') ?? undefined;
  if (raw === undefined || raw === '') return undefined;
  if (!/^(-1|\d{1,15})$/.test(raw)) {
    throw new HttpError('bad_input', `Last-Event-ID must be an event seq (an integer ≥ -1), got "${raw}"`);
  }
  return Number(raw);
}

export function formatEvents(events: readonly BuildEvent[]): string {
  let out = '';
  // JSON.stringify escapes newlines, so each event is exactly one `data:` line.
  for (const e of events) out += `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;
  return out;
}

export function openEventStream(
  res: http.ServerResponse,
  service: BuildServiceApi,
  id: string,
  afterSeq: number | undefined,
  opts: EventStreamOptions,
): void {
  const record = service.getBuild(id);
  if (!record) throw new HttpError('not_found', `unknown build "${id}"`);
  if (afterSeq !== undefined && record.outcome && afterSeq >= record.outcome.seq) {
    // Nothing can follow: 204 is how SSE tells EventSource to stop reconnecting.
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    res.end();
    return;
  }

  let headWritten = false;
  let ended = false;
  let lastSeq = afterSeq ?? -1;
  const early: BuildEvent[] = [];
  let subscription: Subscription | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const cleanup = () => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
    subscription?.unsubscribe();
    subscription = undefined;
    opts.open.delete(finish);
  };
  // Every way out goes through `ended`: a write after end() would be an 'error' event.
  const finish = () => {
    if (ended) return;
    ended = true;
    cleanup();
    res.end();
  };
  const deliver = (events: readonly BuildEvent[]) => {
    if (ended) return;
    // Replay and live delivery can overlap at the seam; seq order makes duplicates easy to drop.
    const fresh = events.filter((e) => e.seq > lastSeq);
    if (fresh.length === 0) return;
    lastSeq = fresh[fresh.length - 1].seq;
    res.write(formatEvents(fresh));
    if (fresh.some((e) => e.type === 'build.finished')) return finish();
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      // Ending politely would keep the backlog in memory until a stuck client reads it; cutting
      // the connection frees it now, and Last-Event-ID resume loses nothing.
      ended = true;
      cleanup();
      res.destroy();
    }
  };

  subscription = service.subscribe(
    id,
    (events) => {
      if (headWritten) deliver(events);
      else early.push(...events);
    },
    afterSeq === undefined ? undefined : { afterSeq },
  );
  const snapshot: BuildRecord = subscription.snapshot;
  if (afterSeq === undefined) lastSeq = snapshot.lastSeq;

  res.writeHead(200, {
    ...(service.detailsEvicted?.(id) ? { 'Build-Details': 'evicted' } : {}),
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.socket?.setNoDelay(true);
  headWritten = true;
  opts.open.add(finish);
  res.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`);
  if (early.length > 0) deliver(early.splice(0));
  if (ended) return;

  heartbeat = setInterval(() => {
    if (!ended) res.write(': heartbeat\n\n');
  }, opts.heartbeatMs);
  // The response's close (not the request's, which fires once its empty body is read) is what
  // tells us the client went away.
  const gone = () => {
    ended = true;
    cleanup();
  };
  res.on('close', gone);
  res.on('error', gone);

  if (FINAL_STATES.has(snapshot.state)) {
    // Finished before we subscribed: any replay the service owes arrives within this tick;
    // after that nothing more can come, so the stream ends rather than idling forever.
    setImmediate(finish);
  }
}
