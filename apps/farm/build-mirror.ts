// The farm's record mirror: serve's copy of each farm build, kept from its Redis stream (one
// RemoteBuild per build: the record and the same BuildFeed a local session has), so every surface
// sees farm builds live. It loads the history kept in Redis, tails the streams of unfinished
// builds, picks up builds another serve started and forgets those trimmed from the history.
// Used by QueueBuildService (queue-service.ts); what happens to a build whose worker is lost is
// build-ownership.ts.
import type { Redis } from 'ioredis';
import type { BuildViewSnapshot } from '../shared/build-view.js';
import type { BuildEvent } from '../shared/protocol.js';
import { FINAL_STATES, parseEntry, type FarmRecord, type FarmStore } from './farm-store.js';
import { keys } from './keys.js';
import type { LogLine } from './redis.js';
import { RemoteBuild } from './remote-build.js';
import { viewFromStream } from './stream-view.js';

export class BuildMirror {
  private readonly builds = new Map<string, RemoteBuild>();
  private closing = false;
  private readerDone?: Promise<void>;

  constructor(
    private readonly store: FarmStore,
    /** A connection of its own: XREAD BLOCK holds it. */
    private readonly reader: Redis,
    private readonly opts: { retainEvents?: number; log: LogLine },
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
  }

  /** Starts mirroring a build from its record (a new one, or one found in Redis). */
  mirror(record: FarmRecord): RemoteBuild {
    const b = new RemoteBuild(record, {
      retainEvents: Math.max(100, this.opts.retainEvents ?? 20_000),
    });
    this.builds.set(record.id, b);
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
        this.opts.log(
          `trt-build-studio serve: build ${b.id}: events ${b.lastSeq + 1}..${events[0].seq - 1} were trimmed from Redis before they were read; its tree may miss phases`,
        );
      }
    }
    b.ingest(events.filter((e) => e.seq > b.lastSeq));
  }

  /** Tails the streams of unfinished builds (XREAD from each one's last seq). */
  private async readLoop(): Promise<void> {
    while (!this.closing) {
      const active = [...this.builds.values()].filter((b) => !b.finished);
      if (active.length === 0) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const streams = active.map((b) => keys.events(b.id));
      const ids = active.map((b) => `0-${b.lastSeq + 1}`);
      let res: Array<[string, Array<[string, string[]]>]> | null;
      try {
        res = (await this.reader.xread('COUNT', 2000, 'BLOCK', 150, 'STREAMS', ...streams, ...ids)) as typeof res;
      } catch {
        if (this.closing) return;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const [key, entries] of res ?? []) {
        const b = this.builds.get(key.slice(keys.events('').length));
        if (!b) continue;
        await this.feed(
          b,
          entries.map(([, f]) => parseEntry(f)).filter((e): e is BuildEvent => e !== undefined),
        ).catch(() => undefined);
      }
    }
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
    for (const [id, b] of this.builds) if (b.finished && !known.has(id)) this.builds.delete(id);
  }

  /** The mirror's view, or (when this serve did not see the build from its start) one rebuilt from Redis. */
  async wholeView(b: RemoteBuild): Promise<BuildViewSnapshot> {
    if (b.viewIsWhole) return b.viewSnapshot();
    return viewFromStream(this.store, b.record()).catch(() => b.viewSnapshot());
  }

  /** A record from Redis, with a view rebuilt from the stream if it ended without one. */
  private async loadRecord(id: string): Promise<FarmRecord | undefined> {
    const rec = await this.store.getRecord(id);
    if (!rec || rec.view || !FINAL_STATES.has(rec.state)) return rec;
    return { ...rec, view: await viewFromStream(this.store, rec) };
  }
}
