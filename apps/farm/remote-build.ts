// One farm build as serve sees it: a mirror of the record in Redis, its build view rebuilt from
// the stream's events, the events kept for replay, and serve's subscribers. Same contract as a
// local build session: subscribe returns the record and the complete view, then events with
// seq > the view's seq (or a reset when the events after the caller's afterSeq are gone).
import { BuildView, type BuildViewSnapshot } from '../shared/build-view.js';
import type { BuildEvent, BuildFinished, CacheStats } from '../shared/protocol.js';
import type { Subscription } from '../service/api.js';
import { EventLog } from '../service/event-log.js';
import { FINAL_STATES, type FarmRecord } from './farm-store.js';

interface Subscriber {
  cb: (events: BuildEvent[]) => unknown;
  ready: boolean;
  closed: boolean;
  buffered: BuildEvent[];
}

export class RemoteBuild {
  private rec: FarmRecord;
  private view: BuildView;
  private log: EventLog;
  private readonly subs = new Set<Subscriber>();
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  /** Stop requests made through this serve (the second escalates on the worker). */
  cancelRequests = 0;

  constructor(
    record: FarmRecord,
    private readonly opts: { retainEvents: number },
  ) {
    this.rec = record;
    this.view = viewOf(record);
    this.log = new EventLog(opts.retainEvents);
  }

  get id(): string {
    return this.rec.id;
  }
  get lastSeq(): number {
    return this.rec.lastSeq;
  }
  get state(): FarmRecord['state'] {
    return this.rec.state;
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
    return { ...rec, farm: { ...this.rec.farm } };
  }

  viewSnapshot(): BuildViewSnapshot {
    return this.view.snapshot();
  }

  /** Serve's own facts (waiting reason, attempt) that do not come as events. */
  setFarm(patch: Partial<FarmRecord['farm']>): void {
    this.rec = { ...this.rec, farm: { ...this.rec.farm, ...patch } };
  }

  setState(state: FarmRecord['state']): void {
    if (!this.finished) this.rec = { ...this.rec, state };
  }

  /** Open phases, for closing them when an attempt is abandoned. */
  openPhases(): number[] {
    return [...this.view.rows.openInstances()].map((o) => o.inst.id);
  }

  ingest(events: BuildEvent[]): void {
    const fresh: BuildEvent[] = [];
    for (const ev of events) {
      if (this.finished || ev.seq <= this.rec.lastSeq || ev.buildId !== this.rec.id) continue;
      let r = { ...this.rec, lastSeq: ev.seq };
      this.view.apply(ev, Date.now());
      this.log.append(ev);
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
      if (ev.type === 'build.finished') for (const w of this.waiters.splice(0)) w(ev);
    }
    this.broadcast(fresh);
  }

  /**
   * Replaces the snapshot by a newer one from Redis (the events between were trimmed from the
   * stream before this serve read them). Replay starts over from the new snapshot.
   */
  reset(record: FarmRecord): void {
    if (record.lastSeq <= this.rec.lastSeq) return;
    this.rec = record;
    this.view = viewOf(record);
    this.log = new EventLog(this.opts.retainEvents);
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

  subscribe(cb: (events: BuildEvent[]) => unknown, afterSeq?: number): Subscription {
    const snapshot = this.record();
    const view = this.view.snapshot();
    // Events after afterSeq that this serve no longer keeps (or never read): start over from the view.
    const reset = afterSeq !== undefined && afterSeq < this.log.droppedThrough;
    const replay = afterSeq !== undefined && !reset ? this.log.after(afterSeq) : [];
    const sub: Subscriber = { cb, ready: false, closed: false, buffered: [] };
    if (!this.finished) this.subs.add(sub);
    queueMicrotask(() => {
      if (sub.closed) return;
      const first = replay.concat(sub.buffered);
      sub.ready = true;
      if (this.finished) this.subs.delete(sub);
      sub.buffered = [];
      if (first.length) this.deliver(sub, first);
    });
    return {
      snapshot,
      view,
      reset,
      unsubscribe: () => {
        sub.closed = true;
        this.subs.delete(sub);
      },
    };
  }

  private broadcast(events: BuildEvent[]): void {
    if (events.length === 0) return;
    for (const sub of this.subs) {
      if (sub.ready) this.deliver(sub, events);
      else sub.buffered.push(...events);
    }
    if (this.finished) for (const sub of this.subs) if (sub.ready) this.subs.delete(sub);
  }

  private deliver(sub: Subscriber, events: BuildEvent[]): void {
    try {
      sub.cb(events);
    } catch {
      // One subscriber's bug must not starve the others.
    }
  }
}

/** The view a record carries (written by the worker), or an empty one to build from the stream. */
function viewOf(record: FarmRecord): BuildView {
  return record.view ? BuildView.fromSnapshot(record.view) : new BuildView(record.id);
}
