// The sink side of the probe protocol (docs/watch.md): a Unix socket that probes inside user
// programs connect to, one connection per process. Each `build.begin` becomes a build of the
// service (a WatchedSession), each later line goes to its build, and a connection that closes
// with a build open makes that build crashed. Used by `watch` (its own service, the terminal)
// and by the studio (`serve`, the desktop app), which listen the same way.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { parseProbeLine, type ProbeHello, type ProbeLine } from '../../shared/probe-fold.js';
import type { WatchedSession } from './watched-session.js';

/** A probe line longer than this is a broken probe, not a build: the connection is dropped. */
export const MAX_PROBE_LINE = 1024 * 1024;

/** What the sink needs of the build service: a new watched build, registered under a fresh id. */
export interface WatchedBuildHost {
  addWatchedBuild(make: (id: string) => WatchedSession): WatchedSession;
}

export interface ProbeSinkOptions {
  /** Makes the session for a build.begin (the caller picks retainEvents; sendCancel is given). */
  makeSession: (id: string, hello: ProbeHello, begin: Extract<ProbeLine, { type: 'build.begin' }>, sendCancel: () => void) => WatchedSession;
  host: WatchedBuildHost;
  /** A new build was registered (watch renders it). */
  onBuild?: (s: WatchedSession, conn: ProbeConnection) => void;
  /** A probe's own warning, or a line that made no sense: one line for a log. */
  onWarning?: (message: string) => void;
  /** Every line of a connection as it came (watch relays them to the studio). */
  onConnection?: (conn: ProbeConnection) => void;
}

/** One probe connection: its hello, its builds, and the way back to the probe. */
export class ProbeConnection {
  hello?: ProbeHello;
  readonly builds = new Map<number, WatchedSession>();
  /** Lines as they came, for a relay (set before the first line by onConnection). */
  onRawLine?: (text: string) => void;
  onClose?: () => void;
  private buf = '';
  private closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly opts: ProbeSinkOptions,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.data(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.close());
  }

  /** A cancel line to the probe: `build` one build of this connection, "*" every one. */
  cancel(build: number | '*'): void {
    if (this.closed || this.socket.destroyed) return;
    this.socket.write(`${JSON.stringify({ type: 'cancel', build })}\n`);
  }

  /** A line from elsewhere (the studio, through watch's relay) straight to the probe. */
  writeRaw(text: string): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  private data(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const text = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (text.trim()) this.line(text);
    }
    if (this.buf.length > MAX_PROBE_LINE) {
      this.opts.onWarning?.(`a probe sent a line of over ${MAX_PROBE_LINE} bytes; its connection was closed`);
      this.socket.destroy();
    }
  }

  private line(text: string): void {
    this.onRawLine?.(text);
    const parsed = parseProbeLine(text);
    if ('error' in parsed) {
      this.opts.onWarning?.(`probe${this.hello ? ` (pid ${this.hello.pid})` : ''}: ${parsed.error}`);
      return;
    }
    const line = parsed.line;
    if (line.type === 'hello') {
      this.hello = line;
      return;
    }
    if (line.type === 'warning') {
      this.opts.onWarning?.(`probe${this.hello ? ` (pid ${this.hello.pid})` : ''}: ${line.message}`);
      return;
    }
    if (!this.hello) {
      this.opts.onWarning?.(`a probe sent ${line.type} before its hello; ignored`);
      return;
    }
    if (line.type === 'build.begin') {
      const open = this.builds.get(line.build);
      if (open && !open.finished) open.connectionClosed(`the probe began build ${line.build} again before it ended`);
      const hello = this.hello;
      const n = line.build;
      const s = this.opts.host.addWatchedBuild((id) => this.opts.makeSession(id, hello, line, () => this.cancel(n)));
      this.builds.set(n, s);
      this.opts.onBuild?.(s, this);
      return;
    }
    const n = line.build;
    if (n === undefined) return; // a log line outside any build: nothing to show it in
    this.builds.get(n)?.probeLine(line);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.builds.values()) if (!s.finished) s.connectionClosed('its probe connection closed mid-build (the program exited or was killed)');
    this.onClose?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** Listens on `socketPath` (a Unix socket in a private folder; an old socket file is replaced). */
export class ProbeSink {
  private server?: net.Server;
  readonly connections = new Set<ProbeConnection>();

  constructor(private readonly opts: ProbeSinkOptions) {}

  listen(socketPath: string): Promise<void> {
    try {
      if (fs.lstatSync(socketPath).isSocket()) fs.unlinkSync(socketPath);
    } catch {
      // Nothing there.
    }
    const server = (this.server = net.createServer((socket) => this.accept(socket)));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        // The folder's mode is the access control; the socket itself is this user's only too.
        try {
          fs.chmodSync(socketPath, 0o600);
        } catch {
          // The folder still guards it.
        }
        resolve();
      });
    });
  }

  /** A connection that arrived some other way (tests; a relay's upstream end). */
  accept(socket: net.Socket): ProbeConnection {
    const conn = new ProbeConnection(socket, this.opts);
    this.connections.add(conn);
    conn.onClose = () => this.connections.delete(conn);
    this.opts.onConnection?.(conn);
    return conn;
  }

  /** Ctrl-C at watch: every probe stops its current build (and any it begins before it hears more). */
  cancelAll(): void {
    for (const c of this.connections) {
      // Each open build says "cancelling" in its stream; the probe gets one line for them all.
      for (const s of c.builds.values()) if (!s.finished) s.cancel('user', { send: false });
      c.cancel('*');
    }
  }

  /** Builds still open on some connection. */
  openBuilds(): WatchedSession[] {
    const out: WatchedSession[] = [];
    for (const c of this.connections) for (const s of c.builds.values()) if (!s.finished) out.push(s);
    return out;
  }

  close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((r) => server.close(() => r()));
  }
}
