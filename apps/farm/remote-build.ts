// One farm build as serve sees it: a mirror of the record in Redis and, for delivery, the same
// BuildFeed a local build session has (apps/service/build-feed.ts: the build view rebuilt from the
// stream's events, the events kept for replay, serve's subscribers with their backlogs). So the
// contract is the local one: subscribe returns the record and the complete view, then events with
// seq > the view's seq, or a reset when the events after the caller's afterSeq are not kept here
// (trimmed, or from before the snapshot this serve started the mirror from).
import { stateOf, type BuildViewSnapshot } from '../shared/build-view.js';
import type { BuildEvent, BuildFinished, CacheStats } from '../shared/protocol.js';
import type { SubscribeOpts, Subscription } from '../service/api.js';
import { BuildFeed, type FeedStart } from '../service/build-feed.js';
import { FINAL_STATES, type FarmRecord } from './farm-store.js';

export class RemoteBuild {
  private rec: FarmRecord;
  private readonly feed: BuildFeed;
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  /** Stop requests made through this serve (the second escalates on the worker). */
  cancelRequests = 0;
  /** A stop was sent to the running build: it reads as cancelling before build.cancelling arrives. */
  private stopRequested = false;
  /**
   * The view holds every event of the build this far: it started from the first event or from a
   * record's view. Otherwise it started empty partway through, and misses what came before.
   */
  private viewWhole: boolean;

  private readonly onChange: () => void;

  /** `onChange`: the build's state or farm facts (worker, waiting reason, attempt) changed. */
  constructor(record: FarmRecord, opts: { retainEvents: number; onChange?: () => void }) {
    this.onChange = opts.onChange ?? (() => undefined);
    this.rec = record;
    this.feed = new BuildFeed(record.id, opts.retainEvents, startOf(record));
    this.viewWhole = wholeFrom(record);
  }

  get viewIsWhole(): boolean {
    return this.viewWhole;
  }

  get id(): string {
    return this.rec.id;
  }
  get lastSeq(): number {
    return this.rec.lastSeq;
  }
  /**
   * The record's state (the farm moves it: queued, running, back to queued for a retry; events
   * end it), and cancelling once a stop was sent, by the one rule every host uses (stateOf).
   */
  get state(): FarmRecord['state'] {
    return stateOf({ status: this.rec.state }, { stopRequested: this.stopRequested });
  }
  get finished(): boolean {
    return FINAL_STATES.has(this.rec.state);
  }
  get farm(): FarmRecord['farm'] {
    return this.rec.farm;
  }

  /** The record as the API gives it (the view travels separately). */
  record(): FarmRecord {
    const { view: _view, ...rec } = this.rec;
    return { ...rec, state: this.state, farm: { ...this.rec.farm } };
  }

  viewSnapshot(): BuildViewSnapshot {
    return this.feed.snapshot();
  }

  /** Serve's own facts (waiting reason, attempt) that do not come as events. */
  setFarm(patch: Partial<FarmRecord['farm']>): void {
    this.rec = { ...this.rec, farm: { ...this.rec.farm, ...patch } };
    this.onChange();
  }

  setState(state: FarmRecord['state']): void {
    if (this.finished || this.rec.state === state) return;
    this.rec = { ...this.rec, state };
    this.onChange();
  }

  /** A stop was sent to the worker running this build. */
  requestStop(): void {
    if (this.rec.state === 'running') this.stopRequested = true;
  }

  /** Open phases, for closing them when an attempt is abandoned. */
  openPhases(): number[] {
    return [...this.feed.view.rows.openInstances()].map((o) => o.inst.id);
  }

  ingest(events: BuildEvent[]): void {
    const before = this.rec;
    const fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (this.finished || ev.seq <= this.rec.lastSeq || ev.buildId !== this.rec.id) continue;
      let r = { ...this.rec, lastSeq: ev.seq };
      switch (ev.type) {
        case 'build.started':
          r = {
            ...r,
            state: r.state === 'queued' ? 'running' : r.state,
            startedAt: r.startedAt ?? new Date().toISOString(),
            backend: ev.backend,
            backendVersion: ev.backendVersion,
            simulated: ev.simulated,
            model: ev.model ?? r.model,
            outputPath: ev.outputPath ?? r.outputPath,
            // Every attempt starts with build.started (a retry after a lost worker is the second),
            // so every serve following the stream counts attempts the same way.
            farm: { ...r.farm, worker: ev.worker ?? r.farm.worker, waiting: undefined, attempt: r.startedAt ? r.farm.attempt + 1 : r.farm.attempt },
          };
          break;
        case 'build.cancelling':
          if (r.state === 'running' || r.state === 'queued') r = { ...r, state: 'cancelling' };
          break;
        case 'cache.stats': {
          const { v: _v, buildId: _b, seq: _s, t: _t, type: _ty, ...stats } = ev;
          r = { ...r, cache: stats as CacheStats };
          break;
        }
        case 'build.finished':
          r = {
            ...r,
            state: ev.status,
            outcome: ev,
            finishedAt: new Date().toISOString(),
            cache: ev.cache ?? r.cache,
            outputPath: ev.outputPath ?? r.outputPath,
            engineAvailable: ev.status === 'succeeded',
            farm: { ...r.farm, waiting: undefined },
          };
          break;
      }
      this.rec = r;
      fresh.push(ev);
    }
    this.feed.push(fresh, Date.now());
    if (this.rec.state !== before.state || this.rec.farm !== before.farm) this.onChange();
    const end = fresh.find((e): e is BuildFinished => e.type === 'build.finished');
    if (end) for (const w of this.waiters.splice(0)) w(end);
  }

  /**
   * Replaces the snapshot by a newer one from Redis (the events between were trimmed from the
   * stream before this serve read them). Replay starts over from the new snapshot.
   */
  reset(record: FarmRecord): void {
    if (record.lastSeq <= this.rec.lastSeq) return;
    this.rec = record;
    this.feed.reset(startOf(record));
    this.viewWhole = wholeFrom(record);
    this.onChange();
    if (this.finished && record.outcome) for (const w of this.waiters.splice(0)) w(record.outcome);
  }

  /** A finished record loaded from Redis (serve restart): settle waiters, nothing to stream. */
  settleFromRecord(): void {
    if (this.rec.outcome) for (const w of this.waiters.splice(0)) w(this.rec.outcome);
  }

  waitForResult(): Promise<BuildFinished> {
    if (this.finished && this.rec.outcome) return Promise.resolve(this.rec.outcome);
    return new Promise((r) => this.waiters.push(r));
  }

  subscribe(cb: (events: BuildEvent[]) => unknown, opts: SubscribeOpts = {}): Subscription {
    const snapshot = this.record();
    const { view, reset, unsubscribe } = this.feed.subscribe(cb, opts);
    return { snapshot, view, reset, unsubscribe };
  }
}

/**
 * Where a mirror starts: the view the record carries (the worker's, or serve's own for the builds
 * it ended), at the record's seq. A record without one (still queued, never run) starts empty.
 */
function startOf(record: FarmRecord): FeedStart {
  return { view: record.view, seq: record.lastSeq, ended: FINAL_STATES.has(record.state) };
}

function wholeFrom(record: FarmRecord): boolean {
  return record.view !== undefined || record.lastSeq < 0;
}
