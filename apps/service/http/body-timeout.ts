// A request body must keep arriving: a client that trickles its body (slowloris) or stops half-way
// would otherwise hold a connection, and a build-service slot for the upload, for as long as the
// 1-hour request timeout allows. Progress is read from the socket's byte counter, so the watch
// never touches the body stream the route reads.
import type * as http from 'node:http';

export const DEFAULT_BODY_TIMEOUT_MS = 60_000;
/** Below this average rate a body older than the timeout is cut (1 MiB/s: a 2 GiB upload in ~35 min). */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 1024 * 1024;

export interface BodyWatchOptions {
  /** No body byte for this long, or a body this old arriving slower than the floor, is cut. */
  timeoutMs: number;
  minBytesPerSecond: number;
  onTimeout(why: string): void;
}

export function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Watches one request's body until it is complete or the connection closes. */
export function watchRequestBody(req: http.IncomingMessage, opts: BodyWatchOptions): void {
  const socket = req.socket;
  const startedAt = Date.now();
  const startBytes = socket.bytesRead;
  let lastBytes = startBytes;
  let lastProgressAt = startedAt;
  const tick = Math.max(10, Math.min(1000, Math.floor(opts.timeoutMs / 4)));

  const stop = () => clearInterval(timer);
  const timer = setInterval(() => {
    if (req.complete || socket.destroyed) return stop();
    const now = Date.now();
    const bytes = socket.bytesRead;
    // A full read buffer means we are the slow side (e.g. the disk): that is no client's fault.
    if (bytes !== lastBytes || req.readableLength >= req.readableHighWaterMark) {
      lastBytes = bytes;
      lastProgressAt = now;
    }
    const idleMs = now - lastProgressAt;
    const ageMs = now - startedAt;
    const rate = ((bytes - startBytes) * 1000) / Math.max(1, ageMs);
    if (idleMs >= opts.timeoutMs) {
      stop();
      opts.onTimeout(`no request body data for ${idleMs} ms`);
    } else if (ageMs >= opts.timeoutMs && rate < opts.minBytesPerSecond) {
      stop();
      opts.onTimeout(`request body too slow: ${Math.round(rate)} bytes/s after ${ageMs} ms (at least ${opts.minBytesPerSecond} bytes/s required)`);
    }
  }, tick);
  timer.unref();
  req.once('end', stop);
  req.once('close', stop);
}
