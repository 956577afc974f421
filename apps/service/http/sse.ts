// Server-Sent Events for one build, the stream contract of docs/http-api.md:
// - `event: snapshot`, data = the BuildRecord (facts, no phases);
// - `event: reset`, data = the build view's complete snapshot, `id:` = its seq, whenever the
//   client must start over: on a fresh connect, on a Last-Event-ID older than the events kept
//   or beyond the build's last event, and when the client fell so far behind that the service
//   dropped it. Always before the events that continue it;
// - then every event with `id:` = seq (EventSource's Last-Event-ID resume), heartbeat comments
//   to keep proxies and idle timers from cutting a silent build, and the end of the response
//   after build.finished.
// A slow client gets backpressure: past a megabyte unsent, the next batch waits for the socket to
// drain, and meanwhile the service coalesces steps; one that falls too far behind is reset in
// the stream.
import type * as http from 'node:http';
import type { BuildViewSnapshot } from '../../shared/build-view.js';
import { eventJson } from '../../shared/event-json.js';
import type { BuildEvent } from '../../shared/protocol.js';
import type { BuildServiceApi, Subscription } from '../api.js';
import { ErrorResponse } from './errors.js';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/**
 * Bytes a stream may have waiting in its response buffer before the next batch waits for the
 * socket to drain (the bound on what one client costs in buffers, as the old cut-off was).
 * Waiting earlier costs latency: a batch that waits for 'drain' waits behind the event loop's
 * queue of worker messages, which under load is long (bench:pipeline showed it at 1 MiB as at
 * Node's own 16 KiB mark; the figures are in docs/benchmarks.md).
 */
const BACKPRESSURE_BYTES = 8 * 1024 * 1024;
/** A client that has not read anything for this long while we wait to write is cut off. */
export const DEFAULT_STALL_CUT_MS = 60_000;

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);

export interface EventStreamOptions {
  heartbeatMs: number;
  /** Enders of the streams still open; the server calls them on shutdown. */
  open: Set<() => void>;
  /** Events a slow client may have waiting (steps coalesced) before it is reset (service default). */
  maxBacklog?: number;
  /** A client that reads nothing for this long while a write waits is cut off (default 60 s). */
  stallCutMs?: number;
}

/** `Last-Event-ID` header, else `?lastEventId=`; -1 asks for every event the service keeps. */
export function parseLastEventId(req: http.IncomingMessage, query: URLSearchParams): number | undefined {
  const header = req.headers['last-event-id'];
  const raw = typeof header === 'string' && header.trim() !== '' ? header.trim() : (query.get('lastEventId') ?? undefined);
  if (raw === undefined || raw === '') return undefined;
  if (!/^(-1|\d{1,15})$/.test(raw)) {
    throw new ErrorResponse('bad_input', `Last-Event-ID must be an event seq (an integer ≥ -1), got "${raw}"`);
  }
  return Number(raw);
}

export function formatEvents(events: readonly BuildEvent[]): string {
  let out = '';
  // Each event is exactly one `data:` line: JSON.stringify escapes newlines, and the worker's
  // text that eventJson reuses was checked for line breaks (apps/shared/event-lines.ts).
  for (const e of events) out += `id: ${e.seq}\ndata: ${eventJson(e)}\n\n`;
  return out;
}

export function formatReset(view: BuildViewSnapshot): string {
  return `event: reset\nid: ${view.seq}\ndata: ${JSON.stringify(view)}\n\n`;
}

export function openEventStream(res: http.ServerResponse, service: BuildServiceApi, id: string, afterSeq: number | undefined, opts: EventStreamOptions): void {
  const record = service.getBuild(id);
  if (!record) throw new ErrorResponse('not_found', `unknown build "${id}"`);
  if (afterSeq !== undefined && record.outcome && afterSeq === record.outcome.seq) {
    // The client has everything: 204 is how SSE tells EventSource to stop reconnecting.
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  // A Last-Event-ID beyond the build's last event names nothing this build sent (an id from
  // another server run, or made up). Resuming after it would drop every event up to it,
  // build.finished included, and the stream would never end; the client starts over instead: a
  // reset with the view, then live events to build.finished, like a fresh connect.
  const ahead = afterSeq !== undefined && afterSeq > (record.outcome?.seq ?? record.lastSeq);

  let headWritten = false;
  let ended = false;
  let lastSeq = -1;
  const early: BuildEvent[] = [];
  let subscription: Subscription | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Set while a write waits for the socket to drain. */
  let draining: Promise<void> | undefined;
  let stallTimer: NodeJS.Timeout | undefined;

  const cleanup = () => {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
    if (stallTimer) clearTimeout(stallTimer);
    stallTimer = undefined;
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
  const cut = () => {
    if (ended) return;
    ended = true;
    cleanup();
    res.destroy();
  };
  /** Resolves when the socket has taken what was written (at once when it has). */
  const drained = (): Promise<void> => {
    if (!res.writableNeedDrain) return Promise.resolve();
    draining ??= new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        if (stallTimer) clearTimeout(stallTimer);
        stallTimer = undefined;
        draining = undefined;
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
      // A client that reads nothing at all would hold the connection forever.
      stallTimer = setTimeout(cut, opts.stallCutMs ?? DEFAULT_STALL_CUT_MS);
    });
    return draining;
  };
  const writeReset = (view: BuildViewSnapshot) => {
    lastSeq = view.seq;
    res.write(formatReset(view));
  };
  /** Writes what is new; returns a promise (busy) while the socket has not taken it. */
  const deliver = (events: readonly BuildEvent[]): Promise<void> | undefined => {
    if (ended) return undefined;
    // Replay and live delivery can overlap at the seam; seq order makes duplicates easy to drop.
    const fresh = events.filter((e) => e.seq > lastSeq);
    if (fresh.length === 0) return undefined;
    lastSeq = fresh[fresh.length - 1].seq;
    res.write(formatEvents(fresh));
    if (fresh.some((e) => e.type === 'build.finished')) {
      finish();
      return undefined;
    }
    return res.writableLength > BACKPRESSURE_BYTES ? drained() : undefined;
  };
  const onEvents = (events: BuildEvent[]): Promise<void> | undefined => {
    if (!headWritten) {
      early.push(...events);
      return undefined;
    }
    return deliver(events);
  };
  const subscribe = (after: number | undefined) => service.subscribe(id, onEvents, { afterSeq: after, maxBacklog: opts.maxBacklog, onOverflow: () => void resetAfterOverflow() });
  /**
   * The service dropped this client for falling too far behind. Once the socket has taken what
   * it holds, the client is told so the only way that leaves no gap: a reset with the view as it
   * is then, and the events after it.
   */
  const resetAfterOverflow = async () => {
    subscription = undefined;
    await drained();
    if (ended) return;
    subscription = subscribe(undefined);
    writeReset(subscription.view);
    if (FINAL_STATES.has(subscription.view.status)) setImmediate(finish);
  };

  // Same tick as getBuild above: no event can have come in between.
  subscription = subscribe(ahead ? undefined : afterSeq);
  const { snapshot, view, reset } = subscription;

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
  if (afterSeq === undefined || reset || ahead) writeReset(view);
  else lastSeq = afterSeq;
  if (early.length > 0) void deliver(early.splice(0));
  if (ended) return;

  heartbeat = setInterval(() => {
    // Nothing piles up behind a client that is not reading.
    if (!ended && !res.writableNeedDrain) res.write(': heartbeat\n\n');
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
