// A build service that plays back a recorded event stream instead of running a worker, so one
// and the same stream can be pushed through every surface's real code (the HTTP server's SSE,
// the Electron hub, the MCP tool, the LSP command). Every subscriber must subscribe before play()
// starts: the record's phase tree is not kept, so a late joiner's snapshot would be empty.
import { ServiceError } from '../../apps/service/api.js';
import type { BuildEvent, BuildFinished, BuildRecord, ModelSummary } from '../../apps/shared/protocol.js';
import { BuildView } from '../../apps/shared/build-view.js';

type Listener = (events: BuildEvent[]) => void;

export class ReplayService {
  private readonly subs = new Set<Listener>();
  private readonly delivered: BuildEvent[] = [];
  /** The build view of what was delivered, as the real service keeps one per build. */
  private view: BuildView;
  private outcome?: BuildFinished;
  private readonly waiters: Array<(f: BuildFinished) => void> = [];
  private next = 0;
  private record: BuildRecord;

  constructor(
    readonly events: readonly BuildEvent[],
    modelPath: string,
  ) {
    this.view = new BuildView(events[0].buildId);
    this.record = {
      id: events[0].buildId,
      state: 'queued',
      modelPath,
      options: { backend: 'simulated' },
      queuedAt: new Date().toISOString(),
      lastSeq: -1,
      phases: [],
      engineAvailable: false,
    };
  }

  get subscribers(): number {
    return this.subs.size;
  }

  async listBackends() {
    return [];
  }

  async inspectModel(modelPath: string): Promise<ModelSummary> {
    return {
      path: modelPath,
      fileName: modelPath.split('/').pop()!,
      fileBytes: 1,
      irVersion: 8,
      opsetImports: [{ domain: '', version: 17 }],
      producer: { name: 'replay', version: '1' },
      graphName: 'g',
      inputs: [],
      outputs: [],
      nodeCount: 1,
      opHistogram: {},
      initializerBytes: 0,
      externalData: { files: [], bytes: 0 },
      dynamicInputs: [],
    };
  }

  async startBuild(): Promise<BuildRecord> {
    return { ...this.record };
  }

  getBuild(id: string): BuildRecord | undefined {
    return id === this.record.id ? { ...this.record } : undefined;
  }

  listBuilds(): BuildRecord[] {
    return [{ ...this.record }];
  }

  cancelBuild(): boolean {
    return false;
  }

  /** Like the real service: the snapshot now, replay and live events after subscribe() returns. */
  subscribe(id: string, cb: Listener, opts: { afterSeq?: number } = {}) {
    if (id !== this.record.id) throw new ServiceError('not_found', `unknown build ${id}`);
    const snapshot = { ...this.record };
    const replay = opts.afterSeq === undefined ? [] : this.delivered.filter((e) => e.seq > opts.afterSeq!);
    let ready = false;
    const buffered: BuildEvent[] = [];
    const listener: Listener = (evs) => (ready ? cb(evs) : buffered.push(...evs));
    if (!this.outcome) this.subs.add(listener);
    queueMicrotask(() => {
      ready = true;
      const first = replay.concat(buffered);
      if (first.length > 0) cb(first);
    });
    return { snapshot, view: this.view.snapshot(), reset: false, unsubscribe: () => void this.subs.delete(listener) };
  }

  waitForResult(): Promise<BuildFinished> {
    return this.outcome ? Promise.resolve(this.outcome) : new Promise((r) => this.waiters.push(r));
  }

  enginePath(): undefined {
    return undefined;
  }

  detailsEvicted(): boolean {
    return false;
  }

  async shutdown(): Promise<void> {}

  /**
   * Delivers events up to (not including) index `until`, in batches of 1..`maxBatch` (a seeded
   * sequence, as the pipeline batches), yielding to the event loop between batches.
   */
  async play(until = this.events.length, maxBatch = 40): Promise<void> {
    let r = 12345 + this.next;
    while (this.next < until) {
      r = (r * 1103515245 + 12345) % 2 ** 31;
      const n = 1 + (r % maxBatch);
      const batch = this.events.slice(this.next, Math.min(until, this.next + n));
      this.next += batch.length;
      this.delivered.push(...batch);
      for (const e of batch) {
        this.track(e);
        this.view.apply(e);
      }
      for (const s of [...this.subs]) s(batch);
      // Nothing follows build.finished: subscriptions end with it.
      if (this.outcome) this.subs.clear();
      await new Promise((res) => setImmediate(res));
    }
    if (this.outcome) {
      // Deliveries first, then the result, as the real service does.
      await new Promise((res) => setImmediate(res));
      for (const w of this.waiters.splice(0)) w(this.outcome);
    }
  }

  private track(e: BuildEvent): void {
    const r = this.record;
    r.lastSeq = e.seq;
    if (e.type === 'build.started' && r.state === 'queued') r.state = 'running';
    if (e.type === 'build.cancelling' && r.state === 'running') r.state = 'cancelling';
    if (e.type === 'build.finished') {
      r.state = e.status;
      r.outcome = e;
      r.finishedAt = new Date().toISOString();
      this.outcome = e;
    }
  }
}
