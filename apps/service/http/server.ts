// The HTTP server of `trt-build-studio serve`: checks Host and token, dispatches /api routes,
// serves the web UI, and shuts down without leaving streams or uploads behind. Hostile clients
// meet limits here: one Host header, bodies that must keep arriving, header and keep-alive
// timeouts, and a cap on connections (docs/http-api.md, "Hardening").
import * as http from 'node:http';
import type * as net from 'node:net';
import type { BuildServiceApi } from '../api.js';
import { checkHost, checkOrigin, checkSingleHost, requireToken, tokenCookie, tokenMatches } from './auth.js';
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MIN_BODY_BYTES_PER_SECOND, hasBody, watchRequestBody } from './body-timeout.js';
import { ErrorResponse, sendError, toErrorResponse } from './errors.js';
import { ROUTES, type RouteContext } from './routes.js';
import { DEFAULT_HEARTBEAT_MS } from './sse.js';
import { securityHeaders, serveStatic } from './static-files.js';

export interface HttpServerOptions {
  service: BuildServiceApi;
  token: string;
  /** Where uploads are streamed; owned by the caller (serve removes it on shutdown). */
  uploadDir: string;
  /** The built web UI (dist/renderer). */
  staticDir: string;
  heartbeatMs?: number;
  /** Events a slow event-stream client may have waiting (steps coalesced) before it is reset. */
  streamMaxBacklog?: number;
  /** An event-stream client that reads nothing for this long while a write waits is cut off (default 60 s). */
  streamStallCutMs?: number;
  maxUploadBytes?: number;
  /** Reports requests that failed with a 500, for the server log. */
  onInternalError?: (err: unknown, req: http.IncomingMessage) => void;
  /** Connections served at once (event streams included); later ones get 503 (default 256). */
  maxConnections?: number;
  /** A body with no data for this long, or this old and below the rate floor, gets 408 (default 60 s). */
  requestBodyTimeoutMs?: number;
  /** The rate floor for bodies older than requestBodyTimeoutMs (default 1 MiB/s). */
  minBodyBytesPerSecond?: number;
  /** Time allowed for a request's headers (default 20 s). */
  headersTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this long (default 5 s). */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_MAX_CONNECTIONS = 256;
/** Connections past the cap are still answered (503), up to this many more; beyond, refused outright. */
const OVER_CAP_ANSWERED = 64;
const DEFAULT_HEADERS_TIMEOUT_MS = 20_000;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;

export interface BuildHttpServer {
  readonly server: http.Server;
  /** Resolves with the port actually bound (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Refuses new connections; open ones (event streams) go on. Resolves once all have closed. */
  stopAccepting(): Promise<void>;
  /** Stops accepting, ends open event streams and waits for the server to close. */
  close(): Promise<void>;
}

export function createHttpServer(opts: HttpServerOptions): BuildHttpServer {
  const openStreams = new Set<() => void>();
  const ctx: RouteContext = {
    service: opts.service,
    uploadDir: opts.uploadDir,
    maxUploadBytes: opts.maxUploadBytes,
    heartbeatMs: opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    openStreams,
    streamMaxBacklog: opts.streamMaxBacklog,
    streamStallCutMs: opts.streamStallCutMs,
    uploadNames: new Map(),
  };
  let closing: Promise<void> | undefined;
  const stopAccepting = () =>
    (closing ??= new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
    }));
  let boundHost = '127.0.0.1';
  let boundPort = 0;

  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const bodyTimeoutMs = opts.requestBodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const minBodyRate = opts.minBodyBytesPerSecond ?? DEFAULT_MIN_BODY_BYTES_PER_SECOND;
  const headersTimeoutMs = opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const open = new Set<net.Socket>();
  const overCap = new WeakSet<net.Socket>();

  const server = http.createServer(
    {
      noDelay: true,
      headersTimeout: headersTimeoutMs,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      // Node enforces the header and request timeouts on this tick; the default 30 s would let a
      // stalled client outlive headersTimeout by that much.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (overCap.has(req.socket)) return refuseOverCap(res);
      if (hasBody(req)) {
        watchRequestBody(req, { timeoutMs: bodyTimeoutMs, minBytesPerSecond: minBodyRate, onTimeout: (why) => cutSlowBody(req, res, why) });
      }
      handle(req, res).catch((err: unknown) => {
        const response = toErrorResponse(err);
        if (response.status >= 500) opts.onInternalError?.(err, req);
        sendError(res, response);
      });
    },
  );
  // Uploads of a couple of GiB may take longer than Node's default 5-minute request timeout; the
  // body watch above is what cuts slow or stalled ones.
  server.requestTimeout = 60 * 60 * 1000;
  // Past the answered overflow, connections are dropped at accept: a flood cannot exhaust fds.
  server.maxConnections = maxConnections + OVER_CAP_ANSWERED;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => answerClientError(err, socket));
  server.on('connection', (socket: net.Socket) => {
    if (open.size >= maxConnections) overCap.add(socket);
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });

  function refuseOverCap(res: http.ServerResponse): void {
    sendError(
      res,
      new ErrorResponse('unavailable', `the server is at its limit of ${maxConnections} connections (event streams count): retry shortly`, {
        Connection: 'close',
        'Retry-After': '1',
      }),
    );
  }

  function cutSlowBody(req: http.IncomingMessage, res: http.ServerResponse, why: string): void {
    // Once a response has finished, Node detaches the request from its socket: closing the socket
    // alone would leave the body's reader (an upload's partial file) waiting forever.
    const drop = () => {
      req.destroy();
      req.socket.destroy();
    };
    if (res.headersSent) return drop();
    sendError(res, new ErrorResponse('timeout', `${why}; the connection is closed`, { Connection: 'close' }));
    // The answer goes out first; a client that does not read it loses the socket anyway.
    res.once('finish', () => setImmediate(drop));
    setTimeout(drop, 1000).unref();
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    checkSingleHost(req);
    checkHost(req, boundPort, boundHost);
    const url = requestUrl(req.url ?? '/');
    const pathname = url.pathname;

    if (pathname === '/api' || pathname.startsWith('/api/')) {
      checkOrigin(req);
      requireToken(req, opts.token);
      for (const route of ROUTES) {
        const m = route.pattern.exec(pathname);
        if (!m) continue;
        const handler = route.methods[req.method ?? ''];
        if (!handler) {
          const allow = Object.keys(route.methods).join(', ');
          throw new ErrorResponse('method_not_allowed', `${req.method} ${pathname} is not allowed (use ${allow})`, { Allow: allow });
        }
        const params = m.slice(1).map(decodeParam);
        await handler({ req, res, params, query: url.searchParams, ctx });
        return;
      }
      throw new ErrorResponse('not_found', `no such API route: ${req.method} ${pathname}`);
    }

    if (pathname === '/' && url.searchParams.has('token')) {
      // The UI link printed at start: trade the token in the URL for a cookie, and drop it from
      // the address bar (and from history) with the redirect.
      if (!tokenMatches(url.searchParams.get('token') ?? '', opts.token)) {
        throw new ErrorResponse('unauthorized', 'wrong token in the link: use the URL printed by `trt-build-studio serve`');
      }
      res.writeHead(302, { ...securityHeaders(), Location: '/', 'Set-Cookie': tokenCookie(opts.token), 'Cache-Control': 'no-store' });
      res.end();
      return;
    }
    await serveStatic(req, res, opts.staticDir, pathname);
  }

  return {
    server,
    listen(port, host) {
      return new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          boundHost = host;
          boundPort = (server.address() as net.AddressInfo).port;
          resolve(boundPort);
        });
      });
    },
    stopAccepting,
    async close() {
      const closed = stopAccepting();
      for (const end of [...openStreams]) end();
      server.closeIdleConnections();
      // Whatever is still mid-request after a grace period is cut, so shutdown cannot hang.
      const force = setTimeout(() => server.closeAllConnections(), 2000);
      await closed;
      clearTimeout(force);
    },
  };
}

/** Parsed as a path: with a base URL, "//x/api/..." would otherwise read as host "x". */
function requestUrl(raw: string): URL {
  try {
    return new URL(raw.startsWith('/') ? `http://localhost${raw}` : raw);
  } catch {
    throw new ErrorResponse('bad_input', 'malformed request URL');
  }
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ErrorResponse('not_found', `malformed build id "${raw}"`);
  }
}

/**
 * A request Node's parser refused before any handler saw it. Node's own answer (431, 408, 400) is
 * written and the socket destroyed at once, so a client still sending a huge header gets a reset
 * instead of the answer. Here the answer is JSON like every other error, and the socket is ended
 * and drained for a moment first, so the client reads why.
 */
const answeredClientError = new WeakSet<net.Socket>();

function answerClientError(err: NodeJS.ErrnoException, socket: net.Socket): void {
  // The parser keeps reporting its error for every later chunk read while draining: answered once.
  if (answeredClientError.has(socket)) return;
  answeredClientError.add(socket);
  if (!socket.writable || socket.bytesWritten > 0 || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', `the request's headers exceed the limit of ${http.maxHeaderSize} bytes`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADERS_TIMEOUT'
        ? [408, 'Request Timeout', 'the request was not received in time']
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? [413, 'Payload Too Large', "the request's chunk extensions are too large"]
          : [400, 'Bad Request', 'the request is not valid HTTP'];
  const code = status === 431 ? 'too_large' : status === 408 ? 'timeout' : status === 413 ? 'too_large' : 'bad_input';
  const body = JSON.stringify({ error: { code, message } });
  socket.on('error', () => {});
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  // Read (and drop) what the client still sends, so that closing does not reset the connection
  // under the answer; then give up on it.
  socket.resume();
  setTimeout(() => socket.destroy(), 1000).unref();
}
