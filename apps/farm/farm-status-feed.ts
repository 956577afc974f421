// The farm view, live: serve's source for GET /api/farm/events. Whatever changes what the view
// shows (a build queued, started or ended, a worker's heartbeat, a worker gone) calls changed();
// the feed composes the status again, at most once every FARM_STREAM_MIN_INTERVAL_MS (changes in
// between are folded into the next), and hands it to its subscribers when it differs from the
// last one sent. Nothing is read while nobody watches, and nothing is read on a timer.
import type { FarmStatus } from '../shared/farm-status.js';
import { FARM_STREAM_MIN_INTERVAL_MS, farmStatusKey } from '../shared/farm-stream.js';

export type FarmStatusListener = (status: FarmStatus, version: number) => void;

export class FarmStatusFeed {
  /** Each subscriber with the version it last got (0: nothing yet). */
  private readonly subs = new Map<FarmStatusListener, number>();
  private latest?: FarmStatus;
  private key = '';
  private version = 0;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private lastRunAt = 0;
  private closed = false;

  constructor(
    private readonly compose: () => Promise<FarmStatus>,
    private readonly minIntervalMs = FARM_STREAM_MIN_INTERVAL_MS,
    private readonly onError: (e: Error) => void = () => undefined,
  ) {}

  get subscribers(): number {
    return this.subs.size;
  }

  /** `cb` gets the current status (at once when known), then every change; returns the unsubscribe. */
  subscribe(cb: FarmStatusListener): () => void {
    this.subs.set(cb, 0);
    if (this.latest) {
      const status = this.latest;
      const version = this.version;
      this.subs.set(cb, version);
      queueMicrotask(() => {
        if (this.subs.has(cb)) cb(status, version);
      });
    } else this.changed();
    return () => {
      this.subs.delete(cb);
      // Kept only while someone watches (changes are not followed otherwise, so it would go stale).
      if (this.subs.size === 0) {
        this.latest = undefined;
        this.key = '';
      }
    };
  }

  /** Something the view shows may have changed. */
  changed(): void {
    if (this.closed || this.subs.size === 0) return;
    if (this.timer || this.running) {
      this.again = true;
      return;
    }
    const wait = Math.max(0, this.lastRunAt + this.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait);
  }

  private async run(): Promise<void> {
    this.running = true;
    this.again = false;
    this.lastRunAt = Date.now();
    try {
      const status = await this.compose();
      const key = farmStatusKey(status);
      if (key !== this.key || !this.latest) {
        this.key = key;
        this.version++;
      }
      this.latest = status;
      for (const [cb, seen] of this.subs) {
        if (seen >= this.version) continue;
        this.subs.set(cb, this.version);
        cb(status, this.version);
      }
    } catch (e) {
      // Redis away: the connection line says so; the next change (or reconnect) tries again.
      this.onError(e as Error);
    } finally {
      this.running = false;
      if (this.again) this.changed();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.subs.clear();
  }
}
