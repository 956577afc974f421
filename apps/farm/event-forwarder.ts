// The farm worker's forwarder: carries one local build's events to the build's Redis stream, in
// order and under the farm's build id, and keeps the build's record in Redis current. Used by
// FarmWorker (farm-worker.ts), one per attempt.
//
// Bounded in bytes: what waits for Redis (the next append, while one is on its way) waits in a
// SubscriberBacklog, the service's own model for a busy subscriber (steps of a phase coalesce,
// only the latest heartbeat stays, nothing else is dropped). Past MAX_FORWARD_WAITING_BYTES push()
// returns a promise that settles once there is room again: the farm worker subscribes with
// pacesBuild, so the local build worker holds its next batch meanwhile (back-pressure to the
// build) instead of the forwarder growing while Redis is slow or stalled.
import * as fs from 'node:fs';
import { PROTOCOL_VERSION, type BuildEvent, type BuildFinished, type BuildRecord, type CacheStats } from '../shared/protocol.js';
import { BuildView } from '../shared/build-view.js';
import { SubscriberBacklog } from '../service/subscriber-backlog.js';
import type { FarmEngineIdentity } from './farm-schemas.js';
import type { FarmStore, FarmRecord } from './farm-store.js';
import type { Published, WorkingCopy } from './cache-copy.js';
import type { Labels } from './labels.js';

/** How often the build's record (snapshot) in Redis is brought up to date while it runs. */
const RECORD_EVERY_MS = 2000;
/** At most this many events in one append (one Lua call), so one call never holds Redis long. */
const MAX_BATCH_EVENTS = 2000;
/**
 * Bytes of events (apps/shared/event-bytes.ts's estimate) that may wait for the next append
 * before push() asks the build to hold (see the header). With the append on its way, the
 * forwarder holds at most about twice this, plus one local batch.
 */
export const MAX_FORWARD_WAITING_BYTES = 8 * 1024 * 1024;

/** Events waiting for one append, and the newest local record that goes with them. */
interface Segment {
  backlog: SubscriberBacklog;
  rec?: BuildRecord;
}

/**
 * Carries a local build's events to its Redis stream in order, one append at a time, with the
 * farm's build id, phase ids offset per attempt and the worker in build.started; and keeps the
 * record (snapshot) in Redis current so a restarted serve starts from it.
 */
export class Forwarder {
  private chain: Promise<void> = Promise.resolve();
  /** The segment queued on `chain` and not yet sent: events emitted meanwhile join it. */
  private open?: Segment;
  /** Segments queued and not yet taken for sending (the open one, and any a step() closed). */
  private readonly waitingSegments = new Set<Segment>();
  /** Resolvers of push()'s promises, settled when there is room again (or nothing will be sent). */
  private roomWaiters: Array<() => void> = [];
  private lastFarmSeq: number;
  private lastRecordAt = 0;
  private readonly view: BuildView;
  private refused = false;
  /**
   * The engine the local build wrote, as it recorded it (inode, size, mtime), set before flush:
   * the final record carries it so serve serves that file only (queue-service.ts enginePath).
   */
  engine?: FarmEngineIdentity;
  /** The local build's record of the engine it wrote (BuildService.engineRecord), once it has one. */
  engineOf?: () => FarmEngineIdentity | undefined;
  /** The build works on a private copy of a shared cache: its path reads as the shared one. */
  private cacheCopy?: { wc: WorkingCopy; publish: () => Promise<Published> };

  constructor(
    private readonly store: FarmStore,
    private readonly farmId: string,
    private readonly owner: string,
    private readonly base: FarmRecord,
    private readonly worker: { id: string; labels: Labels },
    private readonly phaseOffset: number,
    private readonly attempt: number,
    private readonly onRefused: () => void,
    private readonly maxWaitingBytes = MAX_FORWARD_WAITING_BYTES,
  ) {
    this.lastFarmSeq = base.lastSeq;
    // What serve rebuilds from: the view of the stream as written (farm ids and seqs), continued
    // from the earlier attempt's when this is a retry.
    this.view = base.view ? BuildView.fromSnapshot(base.view) : new BuildView(farmId);
    // The record's view is rewritten now and then: a retry first catches up with the stream.
    if (this.view.seq < base.lastSeq) this.chain = this.catchUp().catch((e) => this.fail(e));
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      const events = await this.retry(() => this.store.eventsAfter(this.farmId, this.view.seq));
      if (!events || events.length === 0) return;
      for (const e of events) this.view.apply(e);
    }
  }

  /**
   * The build runs on a private copy of the shared cache `wc.shared`: events and records name the
   * shared cache, and `publish` runs before build.finished is forwarded, so that whoever sees the
   * build end (a client, the next build it starts) finds its entries in the shared cache.
   */
  useCacheCopy(wc: WorkingCopy, publish: () => Promise<Published>): void {
    this.cacheCopy = { wc, publish };
  }

  /** Bytes of events waiting for an append (not counting the one on its way). */
  get waitingBytes(): number {
    let n = 0;
    for (const seg of this.waitingSegments) n += seg.backlog.bytes;
    return n;
  }

  /**
   * Queues a local batch. Returns a promise when more than the bound waits for Redis: the caller
   * holds the build until it settles (the farm worker subscribes with pacesBuild).
   */
  push(events: BuildEvent[], snapshot: () => BuildRecord): Promise<void> | undefined {
    this.queue(events, snapshot);
    if (this.refused || this.waitingBytes <= this.maxWaitingBytes) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private queue(events: BuildEvent[], snapshot: () => BuildRecord): void {
    const mapped = events.map((e) => this.map(e));
    // The local record matches these events now (the callback runs right after they were applied).
    const rec = snapshot();
    const end = mapped.findIndex((e) => e.type === 'build.finished');
    const copy = this.cacheCopy;
    if (end < 0 || !copy) {
      this.enqueue(mapped, rec);
      return;
    }
    if (end > 0) this.enqueue(mapped.slice(0, end), rec);
    this.step(async () => {
      const note = await copy.publish().then(
        (p) => publishedNote(p, copy.wc.shared),
        (e: Error) => ({ severity: 'warning' as const, message: `timing cache ${copy.wc.shared} not updated: ${e.message}` }),
      );
      await this.send([...(note ? [this.logEvent(note.severity, note.message)] : []), ...mapped.slice(end)], rec);
    });
  }

  /**
   * Events join the batch that has not been sent yet, if there is one: while one append is on its
   * way to Redis, everything the build emits meanwhile waits for the next, and goes in one append.
   * One append per local batch instead would queue round trips behind each other whenever the
   * build emits faster than Redis answers (a busy machine), and every later event (build.finished
   * after a Stop among them) would wait behind that queue.
   */
  private enqueue(events: BuildEvent[], rec: BuildRecord | undefined): void {
    if (events.length === 0 || this.refused) return;
    let seg = this.open;
    if (!seg) {
      const fresh: Segment = { backlog: new SubscriberBacklog() };
      seg = fresh;
      this.open = fresh;
      this.waitingSegments.add(fresh);
      this.chain = this.chain
        .then(() => {
          if (this.open === fresh) this.open = undefined;
          return this.sendSegment(fresh);
        })
        .catch((e) => this.fail(e));
    }
    seg.backlog.push(events);
    if (rec) seg.rec = rec;
  }

  /** One segment, in appends of at most MAX_BATCH_EVENTS; the record goes with the last. */
  private async sendSegment(seg: Segment): Promise<void> {
    const events = seg.backlog.take();
    this.waitingSegments.delete(seg);
    this.settleRoom();
    for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS) {
      const last = i + MAX_BATCH_EVENTS >= events.length;
      await this.send(events.slice(i, i + MAX_BATCH_EVENTS), last ? seg.rec : undefined);
    }
  }

  /** Room again (half the bound, so the build is not held and released at every batch): let it go on. */
  private settleRoom(): void {
    if (this.roomWaiters.length === 0) return;
    if (!this.refused && this.waitingBytes > this.maxWaitingBytes / 2) return;
    for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  /** Runs `fn` after everything queued so far; later events go after it, never into an earlier batch. */
  private step(fn: () => Promise<void>): void {
    this.open = undefined;
    this.chain = this.chain.then(fn).catch((e) => this.fail(e));
  }

  private logEvent(severity: 'info' | 'warning', message: string): BuildEvent {
    return { v: PROTOCOL_VERSION, buildId: this.farmId, seq: 0, t: 0, type: 'log', severity, message } as BuildEvent;
  }

  note(severity: 'info' | 'warning', message: string): void {
    this.enqueue([this.logEvent(severity, message)], undefined);
  }

  async flush(final: BuildRecord): Promise<void> {
    this.open = undefined;
    await this.chain;
    await this.writeRecord(final, true);
  }

  /**
   * Events already in the farm's terms (a hand-back's notes: phase ids of the stream, the farm's
   * build id), after everything queued so far. False when Redis refused them (the build is no
   * longer this owner's, or ended).
   */
  async sendFarm(events: BuildEvent[]): Promise<boolean> {
    this.open = undefined;
    await this.chain;
    await this.send(events, undefined).catch((e) => this.fail(e));
    return !this.refused;
  }

  /** Phases of the stream that are still open (farm ids), after everything queued was sent. */
  async openPhases(): Promise<number[]> {
    this.open = undefined;
    await this.chain;
    return [...this.view.rows.openInstances()].map((o) => o.inst.id);
  }

  /**
   * The record a build goes back to the queue with (its worker shut down): the stream's view so
   * far, the attempt that ran, no worker and no ending. From the local record when the local
   * build ran, else from the record the attempt started from.
   */
  handBackRecord(local: BuildRecord | undefined): FarmRecord {
    const { outcome: _o, finishedAt: _f, ...rest } = local ?? this.base;
    const copy = this.cacheCopy?.wc;
    return {
      ...rest,
      ...(copy && local ? { options: { ...rest.options, timingCache: copy.shared }, cache: rest.cache && sharedStats(rest.cache, copy) } : {}),
      id: this.farmId,
      state: 'queued',
      queuedAt: this.base.queuedAt,
      engineAvailable: false,
      lastSeq: this.lastFarmSeq,
      view: this.view.snapshot(),
      farm: { ...this.base.farm, worker: undefined, waiting: undefined, attempt: this.attempt },
    };
  }

  /** The build ended before the local service ran it (bad request, cancelled while waiting). */
  async endWithout(status: 'failed' | 'cancelled', error?: string): Promise<void> {
    this.open = undefined;
    await this.chain;
    const finished = {
      v: PROTOCOL_VERSION,
      buildId: this.farmId,
      seq: 0,
      t: 0,
      type: 'build.finished',
      status,
      durationMs: 0,
      ...(error ? { error } : {}),
    } as BuildEvent;
    const stored = await this.retry(() => this.store.append(this.farmId, [finished], this.owner));
    if (!stored || stored.length === 0) return;
    const f = stored[0] as Extract<BuildEvent, { type: 'build.finished' }>;
    // Serve may have noted things in the stream since this forwarder read the record.
    await this.catchUp().catch(() => undefined);
    this.view.apply(f);
    // With its view, so a serve that loads the record later shows the build ended, not queued.
    const record: FarmRecord = { ...this.base, state: status, lastSeq: f.seq, outcome: f, finishedAt: new Date().toISOString(), view: this.view.snapshot() };
    await this.retry(() => this.store.putRecord(record, this.owner));
  }

  /** Redis refused or failed for good: stop forwarding (serve ends the build if it must). */
  private fail(e: unknown): void {
    void e;
    this.refuse();
  }

  private refuse(): void {
    if (this.refused) return;
    this.refused = true;
    // Nothing more will be sent: drop what waits and never hold the build for it.
    for (const seg of this.waitingSegments) seg.backlog.clear();
    this.waitingSegments.clear();
    this.settleRoom();
    this.onRefused();
  }

  private map(e: BuildEvent): BuildEvent {
    const out = { ...e, buildId: this.farmId } as BuildEvent;
    if (this.phaseOffset) {
      if ('id' in out && typeof out.id === 'number') (out as { id: number }).id += this.phaseOffset;
      if (out.type === 'phase.start' && out.parentId !== null) out.parentId += this.phaseOffset;
    }
    if (out.type === 'build.started') out.worker = this.worker;
    const copy = this.cacheCopy?.wc;
    if (copy) {
      if (out.type === 'log') out.message = sharedName(out.message, copy);
      if (out.type === 'cache.stats') Object.assign(out, sharedStats(out, copy));
      if (out.type === 'build.finished' && out.cache) out.cache = sharedStats(out.cache, copy);
    }
    return out;
  }

  private async send(events: BuildEvent[], rec: BuildRecord | undefined): Promise<void> {
    if (this.refused) return;
    // Serve serves an engine only while it is the file this build wrote: its identity goes into
    // the build's hash before build.finished does, so serve has it when it sees the ending.
    const end = events.find((e): e is BuildFinished => e.type === 'build.finished');
    if (end?.status === 'succeeded' && end.outputPath) {
      const identity = this.engineOf?.() ?? engineIdentityAt(end.outputPath, end.engineBytes);
      if (identity) {
        this.engine = identity;
        await this.retry(() => this.store.setEngine(this.farmId, identity, this.owner));
      }
    }
    const stored = await this.retry(() => this.store.append(this.farmId, events, this.owner));
    if (stored === undefined) {
      // Serve gave the build up (worker presumed lost) or it already ended: stop writing.
      this.refuse();
      return;
    }
    if (stored.length) this.lastFarmSeq = stored[stored.length - 1].seq;
    for (const e of stored) this.view.apply(e);
    // The record is a whole snapshot (up to the retained phases): rewrite it now and then only;
    // the stream carries everything in between.
    if (rec && Date.now() - this.lastRecordAt > RECORD_EVERY_MS) await this.writeRecord(rec, false);
  }

  private async writeRecord(local: BuildRecord, final: boolean): Promise<void> {
    if (this.refused && !final) return;
    this.lastRecordAt = Date.now();
    const copy = this.cacheCopy?.wc;
    const record: FarmRecord = {
      ...local,
      ...(copy
        ? {
            options: { ...local.options, timingCache: copy.shared },
            cache: local.cache && sharedStats(local.cache, copy),
          }
        : {}),
      id: this.farmId,
      queuedAt: this.base.queuedAt,
      lastSeq: this.lastFarmSeq,
      view: this.view.snapshot(),
      outcome: local.outcome
        ? { ...local.outcome, buildId: this.farmId, seq: this.lastFarmSeq, ...(copy && local.outcome.cache ? { cache: sharedStats(local.outcome.cache, copy) } : {}) }
        : undefined,
      farm: { ...this.base.farm, worker: this.worker, waiting: undefined, attempt: this.attempt, ...(final && this.engine ? { engine: this.engine } : {}) },
    };
    if (!final && record.outcome) return;
    await this.retry(() => this.store.putRecord(record, this.owner));
  }

  /** Redis may be restarting: commands wait for the reconnect; a failed one is tried again. */
  private async retry<T>(fn: () => Promise<T>): Promise<T | undefined> {
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (e) {
        if (i >= 50) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

/** A text that names the private copy names the shared cache instead. */
function sharedName(text: string, wc: WorkingCopy): string {
  return text.split(wc.path).join(wc.shared);
}

function sharedStats<T extends CacheStats>(stats: T, wc: WorkingCopy): T {
  const out = { ...stats };
  for (const k of ['path', 'warning', 'deferredPath'] as const) if (out[k] !== undefined) out[k] = sharedName(out[k]!, wc);
  return out;
}

/** What the build's log says about its publication into the shared cache. */
function publishedNote(p: Published, shared: string): { severity: 'info' | 'warning'; message: string } | undefined {
  const aside = (files: string[]) => (files.length ? `; entries it could not save were kept in ${files.join(', ')}` : '');
  switch (p.kind) {
    case 'nothing':
      return undefined;
    case 'replaced':
      return {
        severity: 'info',
        message:
          `Published this build's timing-cache entries into the shared cache ${shared}` +
          (p.foldedSidecars ? ` (with ${p.foldedSidecars} pending file(s) of earlier builds)` : '') +
          aside(p.sidecars),
      };
    case 'sidecar':
      return {
        severity: 'info',
        message:
          `Timing cache: ${p.why}, so this build's entries were kept in ${p.sidecars.join(', ')} beside the shared cache ${shared}; ` +
          'every build loads them, and the next build that publishes into it merges them in',
      };
  }
}

/** The regular file (not a link) at `p`, as it is now; undefined when it is not one, or not `bytes` long. */
function engineIdentityAt(p: string, bytes: number | undefined): FarmEngineIdentity | undefined {
  try {
    const st = fs.lstatSync(p);
    if (!st.isFile() || (bytes !== undefined && st.size !== bytes)) return undefined;
    return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}
