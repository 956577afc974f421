// An in-memory BuildServiceApi for testing the HTTP layer alone: builds advance only when a test
// says so, so stream contents and resume points are exact. Models are files starting "FAKEONNX".
// Views, replay, resets and fan-out are the real service's (build-feed.ts), so the stream
// contract the HTTP layer sees is the real one.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildViewSnapshot } from '../../../shared/build-view.js';
import { ServiceError, type BuildServiceApi, type StartBuildInput, type SubscribeOpts, type Subscription } from '../../api.js';
import { BuildFeed } from '../../build-feed.js';
import {
  BuildOptions,
  PROTOCOL_VERSION,
  type BuildEvent,
  type BuildFinished,
  type BuildRecord,
  type BuildStatus,
  type CancelReason,
  type EventBody,
  type ModelSummary,
} from '../../../shared/protocol.js';

interface FakeBuild {
  record: BuildRecord;
  events: BuildEvent[];
  feed: BuildFeed;
  started: number;
  enginePath?: string;
  cancelCalls: number;
  input: StartBuildInput;
  finished: Promise<BuildFinished>;
  resolveFinished: (e: BuildFinished) => void;
}

export const FAKE_MAGIC = 'FAKEONNX';

export class FakeBuildService implements BuildServiceApi {
  readonly builds = new Map<string, FakeBuild>();
  shutdownCalls = 0;
  private nextId = 1;

  /** `retainEvents`: events kept per build for replay (older resumes get a reset). */
  constructor(
    private readonly outputDir: string,
    private readonly retainEvents = 20_000,
  ) {}

  get subscriberCount(): number {
    let n = 0;
    for (const b of this.builds.values()) n += b.feed.subscriberCount;
    return n;
  }

  async listBackends() {
    return [{ name: 'simulated' as const, available: true, version: 'sim-fake' }];
  }

  async inspectModel(modelPath: string): Promise<ModelSummary> {
    let buf: Buffer;
    try {
      buf = await fs.promises.readFile(modelPath);
    } catch {
      throw new ServiceError('not_found', `model not found: ${modelPath}`);
    }
    if (!buf.subarray(0, FAKE_MAGIC.length).equals(Buffer.from(FAKE_MAGIC))) {
      throw new ServiceError('bad_model', `${path.basename(modelPath)} is not an ONNX model (fake reader)`);
    }
    return {
      fileName: path.basename(modelPath),
      fileBytes: buf.length,
      irVersion: 8,
      opsetImports: [{ domain: '', version: 17 }],
      producer: { name: 'fake', version: '1' },
      graphName: 'g',
      inputs: [],
      outputs: [],
      nodeCount: 0,
      opHistogram: {},
      initializerBytes: 0,
      externalData: { files: [], bytes: 0 },
      dynamicInputs: [],
    };
  }

  async startBuild(input: StartBuildInput): Promise<BuildRecord> {
    // Like the real service: the display name shows as the model's file name.
    const model = { ...(await this.inspectModel(input.modelPath)), ...(input.modelDisplayName ? { fileName: input.modelDisplayName } : {}) };
    const id = `b${this.nextId++}`;
    let resolveFinished!: (e: BuildFinished) => void;
    const build: FakeBuild = {
      record: {
        id,
        state: 'running',
        modelPath: input.modelPath,
        outputPath: input.outputPath ?? path.join(this.outputDir, `${path.basename(input.modelPath).replace(/\.onnx$/i, '')}-${id}.engine`),
        options: BuildOptions.parse(input.options ?? {}),
        queuedAt: new Date().toISOString(),
        startedAt: new Date().toISOString(),
        model,
        lastSeq: -1,
        engineAvailable: false,
      },
      events: [],
      feed: new BuildFeed(id, this.retainEvents),
      started: Date.now(),
      cancelCalls: 0,
      input,
      finished: new Promise((r) => (resolveFinished = r)),
      resolveFinished,
    };
    this.builds.set(id, build);
    this.emit(id, [{ type: 'build.started', backend: 'simulated', backendVersion: 'sim-fake', simulated: true }]);
    return structuredClone(build.record);
  }

  /** Stamps and publishes events as one batch, like a worker flush. */
  emit(id: string, bodies: EventBody[]): BuildEvent[] {
    const b = this.must(id);
    const events = bodies.map((body) => {
      const e = { ...body, v: PROTOCOL_VERSION, buildId: id, seq: b.events.length, t: Date.now() - b.started } as BuildEvent;
      b.events.push(e);
      return e;
    });
    for (const e of events) {
      b.record.lastSeq = e.seq;
      if (e.type === 'build.finished') {
        b.record.state = e.status;
        b.record.outcome = e;
        b.record.finishedAt = new Date().toISOString();
        b.record.engineAvailable = e.status === 'succeeded';
        b.resolveFinished(e);
      }
    }
    b.feed.push(events);
    return events;
  }

  /** Finishes a build; a succeeded one gets an engine file with the given bytes. */
  finish(id: string, status: BuildStatus, engine = Buffer.from('fake engine bytes')): BuildFinished {
    const b = this.must(id);
    if (status === 'succeeded') {
      b.enginePath = b.record.outputPath!;
      fs.writeFileSync(b.enginePath, engine);
    }
    const [e] = this.emit(id, [{ type: 'build.finished', status, durationMs: Date.now() - b.started, engineBytes: status === 'succeeded' ? engine.length : undefined }]);
    return e as BuildFinished;
  }

  getBuild(id: string): BuildRecord | undefined {
    const b = this.builds.get(id);
    return b && structuredClone(b.record);
  }

  listBuilds(): BuildRecord[] {
    return [...this.builds.values()].map((b) => structuredClone(b.record));
  }

  cancelBuild(id: string, reason: CancelReason = 'user'): boolean {
    const b = this.builds.get(id);
    if (!b || b.record.outcome) return false;
    b.cancelCalls++;
    if (b.record.state !== 'cancelling') {
      b.record.state = 'cancelling';
      this.emit(id, [{ type: 'build.cancelling', requestedAt: Date.now() - b.started, reason }]);
    }
    // Unwinds "at the next step", asynchronously, like the real thing.
    setTimeout(() => {
      if (!b.record.outcome) this.finish(id, 'cancelled');
    }, 5);
    return true;
  }

  subscribe(id: string, onEvents: (events: BuildEvent[]) => unknown, opts: SubscribeOpts = {}): Subscription {
    const b = this.builds.get(id);
    if (!b) throw new ServiceError('not_found', `unknown build "${id}"`);
    const snapshot = structuredClone(b.record);
    const sub = b.feed.subscribe(onEvents, opts);
    return { snapshot, view: sub.view, reset: sub.reset, unsubscribe: sub.unsubscribe };
  }

  getView(id: string): BuildViewSnapshot | undefined {
    return this.builds.get(id)?.feed.snapshot();
  }

  waitForResult(id: string): Promise<BuildFinished> {
    return this.must(id).finished;
  }

  enginePath(id: string): string | undefined {
    const p = this.builds.get(id)?.enginePath;
    return p && fs.existsSync(p) ? p : undefined;
  }

  async shutdown(): Promise<void> {
    this.shutdownCalls++;
    for (const b of this.builds.values()) if (!b.record.outcome) this.cancelBuild(b.record.id, 'shutdown');
    await Promise.all([...this.builds.values()].map((b) => b.finished));
  }

  private must(id: string): FakeBuild {
    const b = this.builds.get(id);
    if (!b) throw new Error(`fake: no build ${id}`);
    return b;
  }
}
