// `watch` in front of a studio (docs/watch.md): each probe connection of the program is relayed,
// line for line, over a connection of its own to the studio's probe socket, and the studio's
// cancel lines come back to the probe. watch keeps folding and rendering the same lines itself,
// so a studio that goes away changes nothing for the program or the terminal. While the probe
// connection lasts the relay looks for the studio again (a restarted studio publishes a new
// socket) and, once connected, sends what the studio needs to show the builds still open: the
// hello, each open build's build.begin, and its open phases with their latest steps.
import * as net from 'node:net';
import type { ProbeConnection } from './probe-sink.js';

export interface RelayOptions {
  /** The studio's probe socket now (read from the registry each time), or undefined. */
  findSocket: () => string | undefined;
  /** A line for the terminal (lost the studio, back again). */
  onNote?: (message: string) => void;
  /**
   * The studio asked to cancel (Stop there): `build` a number of this connection or "*". Default:
   * the line goes to the probe as it is. watch cancels its own session instead, which tells the
   * probe and shows "cancelling" in the terminal too.
   */
  onCancel?: (build: number | '*') => void;
  /** How often to look for the studio again while it is gone (default 1 s). */
  retryMs?: number;
}

interface OpenBuild {
  begin: string;
  /** Open phases in start order: their phase.start line and latest phase.step line. */
  phases: Array<{ name: string; start: string; step?: string }>;
}

export class ProbeRelay {
  private upstream?: net.Socket;
  private connected = false;
  private hello?: string;
  private readonly builds = new Map<number, OpenBuild>();
  private retry?: NodeJS.Timeout;
  private closed = false;
  /** Lines before the first connection is up (it is made as the probe connects): sent as they came. */
  private pending: string[] | undefined = [];
  private everConnected = false;
  private lostSaid = false;

  constructor(
    private readonly conn: ProbeConnection,
    private readonly opts: RelayOptions,
  ) {
    // Several relays may share one connection (watch fans out to every live studio): chained.
    const prevLine = conn.onRawLine;
    conn.onRawLine = (text) => {
      prevLine?.(text);
      this.line(text);
    };
    const prevClose = conn.onClose;
    conn.onClose = () => {
      prevClose?.();
      this.close();
    };
    this.connect();
  }

  private line(text: string): void {
    this.track(text);
    if (this.connected) this.upstream!.write(`${text}\n`);
    else if (this.pending) {
      this.pending.push(text);
      // A studio slow to answer: from here on, the state replay stands in for the lines.
      if (this.pending.length > 10_000) this.pending = undefined;
    }
  }

  /** Keeps what a restarted studio needs to see the open builds. */
  private track(text: string): void {
    let o: { type?: unknown; build?: unknown; name?: unknown };
    try {
      o = JSON.parse(text);
    } catch {
      return;
    }
    const n = typeof o.build === 'number' ? o.build : undefined;
    switch (o.type) {
      case 'hello':
        this.hello = text;
        break;
      case 'build.begin':
        if (n !== undefined) this.builds.set(n, { begin: text, phases: [] });
        break;
      case 'phase.start':
        if (n !== undefined && typeof o.name === 'string') this.builds.get(n)?.phases.push({ name: o.name, start: text });
        break;
      case 'phase.step': {
        const b = n !== undefined ? this.builds.get(n) : undefined;
        const p = b && [...b.phases].reverse().find((x) => x.name === o.name);
        if (p) p.step = text;
        break;
      }
      case 'phase.finish': {
        const b = n !== undefined ? this.builds.get(n) : undefined;
        if (!b) break;
        for (let i = b.phases.length - 1; i >= 0; i--) {
          if (b.phases[i].name === o.name) {
            b.phases.splice(i, 1);
            break;
          }
        }
        break;
      }
      case 'build.end':
        if (n !== undefined) this.builds.delete(n);
        break;
    }
  }

  private connect(): void {
    if (this.closed) return;
    const socketPath = this.opts.findSocket();
    if (!socketPath) return this.later();
    const up = net.connect(socketPath);
    this.upstream = up;
    up.setEncoding('utf8');
    let buf = '';
    up.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const text = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        // Only cancels go back: the studio has nothing else to tell a probe.
        if (/"type"\s*:\s*"cancel"/.test(text)) this.cancelFromStudio(text);
      }
      if (buf.length > 65536) buf = '';
    });
    up.on('connect', () => {
      if (this.closed) return up.end();
      this.connected = true;
      if (this.everConnected) this.opts.onNote?.('the studio is back: the builds still open are shown there again');
      this.everConnected = true;
      this.lostSaid = false;
      // What the studio needs first; everything after goes live.
      const replay: string[] = this.pending ?? [];
      if (!this.pending && this.hello) replay.push(this.hello);
      for (const b of this.pending ? [] : this.builds.values()) {
        replay.push(b.begin);
        for (const p of b.phases) {
          replay.push(p.start);
          if (p.step) replay.push(p.step);
        }
      }
      this.pending = undefined;
      up.write(replay.map((l) => `${l}\n`).join(''));
    });
    up.on('error', () => {});
    up.on('close', () => {
      const was = this.connected;
      this.connected = false;
      this.upstream = undefined;
      if (this.closed) return;
      if (was && !this.lostSaid) {
        this.lostSaid = true;
        this.opts.onNote?.('the studio went away; the build goes on, shown here');
      }
      this.later();
    });
  }

  private cancelFromStudio(text: string): void {
    let build: unknown;
    try {
      build = (JSON.parse(text) as { build?: unknown }).build;
    } catch {
      return;
    }
    if (build !== '*' && typeof build !== 'number') return;
    if (this.opts.onCancel) this.opts.onCancel(build);
    else this.conn.writeRaw(text);
  }

  private later(): void {
    this.pending = undefined;
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect();
    }, this.opts.retryMs ?? 1000);
    this.retry.unref();
  }

  get isConnected(): boolean {
    return this.connected;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.upstream?.end();
  }
}
