// A BuildClient double for component tests: the test decides what the "service" answers and
// pushes events by hand. Never shipped: the app uses WebBuildClient or Electron's preload.
import type { BuildClient, DeleteEnginesResult, EngineFile, ModelRef, SavedEngine } from '../../shared/build-client.js';
import type { BackendInfo, BuildEvent, BuildOptionsInput, BuildRecord, ModelSummary } from '../../shared/protocol.js';

export const summary: ModelSummary = {
  fileName: 'tiny.onnx',
  fileBytes: 2048,
  irVersion: 8,
  opsetImports: [{ domain: '', version: 17 }],
  producer: { name: 'onnx-gen', version: '1.0' },
  graphName: 'g',
  inputs: [{ name: 'input', elemType: 'float32', shape: [1, 3, 224, 224] }],
  outputs: [{ name: 'probs', elemType: 'float32', shape: [1, 10] }],
  nodeCount: 10,
  opHistogram: { Conv: 4, Relu: 4, Add: 2 },
  initializerBytes: 1000,
  externalData: { files: [], bytes: 0 },
  dynamicInputs: [],
};

export class ScriptedClient implements BuildClient {
  readonly capabilities = { host: 'web', nativeDialogs: false, recentFiles: false } as const;
  started: { model: ModelRef; options: BuildOptionsInput }[] = [];
  cancelled: string[] = [];
  readonly subs = new Map<string, { onSnapshot(r: BuildRecord): void; onEvents(e: BuildEvent[]): void }>();
  nextModel: ModelRef | Error = { path: '/srv/tiny.onnx', displayName: 'tiny.onnx', summary };

  async listBackends(): Promise<BackendInfo[]> {
    return [
      { name: 'tensorrt', available: false, reason: 'libnvinfer.so.10 not found' },
      { name: 'simulated', available: true, version: 'sim-1' },
    ];
  }
  async openModel(): Promise<ModelRef | null> {
    if (this.nextModel instanceof Error) throw this.nextModel;
    return this.nextModel;
  }
  async openDroppedFile(): Promise<ModelRef> {
    return (await this.openModel())!;
  }
  /** The run settings (time budget) of each started build, in order. */
  startedRun: ({ timeBudgetSeconds?: number } | undefined)[] = [];
  async startBuild(model: ModelRef, options: BuildOptionsInput, run?: { timeBudgetSeconds?: number }): Promise<{ id: string }> {
    this.started.push({ model, options });
    this.startedRun.push(run);
    return { id: `b${this.started.length}` };
  }
  async cancelBuild(id: string): Promise<void> {
    this.cancelled.push(id);
  }
  builds: BuildRecord[] = [];
  async listBuilds(): Promise<BuildRecord[]> {
    return this.builds;
  }
  subscribe(id: string, h: { onSnapshot(r: BuildRecord): void; onEvents(e: BuildEvent[]): void }): () => void {
    this.subs.set(id, h);
    return () => this.subs.delete(id);
  }
  async saveEngine(): Promise<SavedEngine | null> {
    return null;
  }
  /** The service's output folder; names in `undeletable` are refused with that reason. */
  engines: EngineFile[] = [];
  undeletable = new Map<string, string>();
  deleteCalls: string[][] = [];
  listEngineCalls = 0;
  async listEngines(): Promise<EngineFile[]> {
    this.listEngineCalls++;
    return [...this.engines];
  }
  async deleteEngines(names: string[]): Promise<DeleteEnginesResult> {
    this.deleteCalls.push(names);
    const refused = names.filter((n) => this.undeletable.has(n)).map((name) => ({ name, reason: this.undeletable.get(name)! }));
    const deleted = names.filter((n) => !this.undeletable.has(n) && this.engines.some((f) => f.name === n));
    this.engines = this.engines.filter((f) => !deleted.includes(f.name));
    return { deleted, refused };
  }
  push(id: string, events: BuildEvent[]): void {
    const s = this.subs.get(id);
    if (!s) throw new Error(`nobody subscribed to ${id}`);
    s.onEvents(events);
  }
}
