// The farm's record mirror: serve's copy of each farm build, kept from its Redis stream (one
// RemoteBuild per build: the record and the same BuildFeed a local session has), so every surface
// sees farm builds live. It loads the history kept in Redis, tails the streams of unfinished
// builds, picks up builds another serve started and forgets those trimmed from the history.
// Used by QueueBuildService (queue-service.ts); what happens to a build whose worker is lost is
// build-ownership.ts.
import * as crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BuildViewSnapshot } from '../shared/build-view.js';
import type { BuildEvent } from '../shared/protocol.js';
import { FINAL_STATES, type FarmRecord, type FarmStore } from './farm-store.js';
import { keys } from './keys.js';
import type { LogLine } from './redis.js';
import { RemoteBuild } from './remote-build.js';
import { viewFromStream } from './stream-view.js';

/**
 * The reader's XREAD gives up after this long without an entry and starts over. Not a polling
 * interval: entries and wakes end the wait at once; this only bounds how long a lost wake (Redis
 * restarted between the wake and the read) could leave a new build's stream unread.
 */
export const READ_BLOCK_LIMIT_MS = 5000;
/** A serve that died without cleaning up leaves its wake stream behind this long at most. */
const WAKE_KEY_TTL_MS = 24 * 3600_000;

export interface MirrorOptions {
  retainEvents?: number;
  log: LogLine;
  /** How long one blocking read of the build streams waits at most (default READ_BLOCK_LIMIT_MS). */
  readBlockLimitMs?: number;
  /** Something the farm view shows changed (a build joined, changed or left). */
  onChange(): void;
}

export class BuildMirror {
  private readonly builds = new Map<string, RemoteBuild>();
  private closing = false;
  private readerDone?: Promise<void>;
  /** This serve's wake stream (readLoop) and the last entry of it the reader has seen. */
  private readonly wakeKey = keys.serveWake(crypto.randomUUID());
  private wakeSeen = '0-0';

  constructor(
    private readonly store: FarmStore,
    /** A connection of its own: XREAD BLOCK holds it. */
    private readonly reader: Redis,
    /** The command connection: wakes go through it. */
    private readonly commands: Redis,
    private readonly opts: MirrorOptions,
  ) {}

  get(id: string): RemoteBuild | undefined {
    return this.builds.get(id);
  }

  all(): IterableIterator<RemoteBuild> {
    return this.builds.values();
  }

  /** Starts tailing the streams of unfinished builds. */
  start(): void {
    this.readerDone = this.readLoop();
  }

  /** Stops following (the builds go on in the farm). */
  async stop(): Promise<void> {
    this.closing = true;
    this.reader.disconnect();
    await this.readerDone;
    await this.commands.del(this.wakeKey).catch(() => undefined);
  }

  /** Starts mirroring a build from its record (a new one, or one found in Redis). */
  mirror(record: FarmRecord): RemoteBuild {
    const b = new RemoteBuild(record, {
      retainEvents: Math.max(100, this.opts.retainEvents ?? 20_000),
      onChange: () => this.opts.onChange(),
    });
    this.builds.set(record.id, b);
    if (!b.finished) this.wakeReader();
    this.opts.onChange();
    return b;
  }

  async loadHistory(): Promise<void> {
    for (const id of await this.store.historyIds()) {
      const rec = await this.loadRecord(id);
      if (!rec) continue;
      const b = this.mirror(rec);
      // The record is the snapshot; the stream has whatever happened after it was written.
      if (!b.finished) await this.feed(b, await this.store.eventsAfter(id, rec.lastSeq));
    }
  }

  /**
   * Events from the stream into a mirror. The farm numbers a build's events without gaps, so a
   * gap means the stream was trimmed past what this serve had read: the record in Redis (a
   * snapshot the worker rewrites every few seconds) replaces the mirror's state first.
   */
  private async feed(b: RemoteBuild, events: BuildEvent[]): Promise<void> {
    if (events.length && events[0].seq > b.lastSeq + 1) {
      const rec = await this.store.getRecord(b.id);
      if (rec) b.reset(rec);
      if (events[0].seq > b.lastSeq + 1) {
        this.opts.log(`build ${b.id}: events ${b.lastSeq + 1}..${events[0].seq - 1} were trimmed from Redis before they were read; its tree may miss phases`);
      }
    }
    const fresh = events.filter((e) => e.seq > b.lastSeq);
    // The engine a succeeded build serves is the one its worker recorded before the ending.
    if (fresh.some((e) => e.type === 'build.finished' && e.status === 'succeeded') && !b.record().farm.engine) {
      const engine = await this.store.getEngine(b.id).catch(() => undefined);
      if (engine) b.setFarm({ engine });
    }
    b.ingest(fresh);
  }

  /**
   * Tails the streams of unfinished builds: one XREAD, blocking until an entry arrives in any of
   * them, from each one's last seq. It also reads this serve's wake stream, where `wakeReader`
   * adds an entry when a build joins the set, so a new build's stream is read from its first
   * event on rather than after the read in progress gives up. Nothing on this path waits out a
   * fixed interval: the block's limit is only a safety net (a wake lost to a Redis restart).
   */
  private async readLoop(): Promise<void> {
    while (!this.closing) {
      const active = [...this.builds.values()].filter((b) => !b.finished);
      const streams = [this.wakeKey, ...active.map((b) => keys.events(b.id))];
      const ids = [this.wakeSeen, ...active.map((b) => `0-${b.lastSeq + 1}`)];
      let res: Array<[string, Array<[string, string[]]>]> | null;
      try {
        res = (await this.reader.xread('COUNT', 2000, 'BLOCK', this.opts.readBlockLimitMs ?? READ_BLOCK_LIMIT_MS, 'STREAMS', ...streams, ...ids)) as typeof res;
      } catch {
        if (this.closing) return;
        // Redis away: the connection line said so; ioredis reconnects and the next read resumes.
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const [key, entries] of res ?? []) {
        if (key === this.wakeKey) {
          this.wakeSeen = entries[entries.length - 1][0];
          continue;
        }
        const b = this.builds.get(key.slice(keys.events('').length));
        if (!b) continue;
        await this.feed(b, this.store.parseEntries(b.id, entries)).catch(() => undefined);
      }
    }
  }

  /**
   * Makes the blocked XREAD return and start over with the current set of builds. An entry in the
   * wake stream, read from the last one seen, cannot be missed: written before the XREAD reaches
   * Redis, it is returned at once.
   */
  private wakeReader(): void {
    if (this.closing || !this.readerDone) return;
    void this.commands
      .multi()
      .xadd(this.wakeKey, 'MAXLEN', '~', 16, '*', 'w', '1')
      .pexpire(this.wakeKey, WAKE_KEY_TTL_MS)
      .exec()
      .catch(() => undefined);
  }

  /**
   * Builds started through another serve on the same Redis appear here too, and builds trimmed
   * from the history in Redis leave this process's memory (it stays bounded like the history).
   */
  async followHistory(): Promise<void> {
    const ids = await this.store.historyIds();
    const known = new Set(ids);
    for (const id of ids) {
      if (this.builds.has(id)) continue;
      const rec = await this.loadRecord(id);
      if (!rec) continue;
      const b = this.mirror(rec);
      if (!b.finished) await this.feed(b, await this.store.eventsAfter(id, rec.lastSeq));
    }
    for (const [id, b] of this.builds) {
      if (b.finished && !known.has(id)) {
        this.builds.delete(id);
        this.opts.onChange();
      }
    }
  }

  /** The mirror's view, or (when this serve did not see the build from its start) one rebuilt from Redis. */
  async wholeView(b: RemoteBuild): Promise<BuildViewSnapshot> {
    if (b.viewIsWhole) return b.viewSnapshot();
    return viewFromStream(this.store, b.record()).catch(() => b.viewSnapshot());
  }

  /** A record from Redis, with a view rebuilt from the stream if it ended without one. */
  private async loadRecord(id: string): Promise<FarmRecord | undefined> {
    const found = await this.store.getRecord(id);
    // A record written before its worker's final one may lack the engine its hash has.
    const engine = found?.state === 'succeeded' && !found.farm.engine ? await this.store.getEngine(id) : undefined;
    const rec = found && engine ? { ...found, farm: { ...found.farm, engine } } : found;
    if (!rec || rec.view || !FINAL_STATES.has(rec.state)) return rec;
    return { ...rec, view: await viewFromStream(this.store, rec) };
  }
}
