// The build service, described once. Every build service implements these calls: the local one
// (apps/service/build-service.ts) and the build farm's (apps/farm/queue-service.ts), through
// `BuildServiceApi` (apps/service/api.ts: these calls plus the one that needs the service's own
// disk). The clients of a page (apps/shared/build-client.ts: the browser's over HTTP, Electron's
// over IPC) make the same calls across a process boundary, so they take their signatures from here
// through `Remote`: a call and its answer are written once, and a change to either shows as a
// compile error in every service and every client. The CLI, the HTTP/SSE server, the MCP and LSP
// servers and Electron main all sit on these calls, so a build behaves the same whichever surface
// started it.
//
// Here (apps/shared: types only, no Node) so the page's client can take its shapes from it.
import type { FarmStatus } from './farm-status.js';
import type { BuildViewSnapshot } from './build-view.js';
import type { BackendChoice, BackendInfo, BuildEvent, BuildFinished, BuildOptionsInput, BuildRecord, CancelReason, ModelSummary } from './protocol.js';
import type { BuildRoutesRead } from './build-routes.js';
import type { DeleteEnginesResult, EngineFile } from './engine-files.js';

/** What a call refused for; each has its HTTP status (apps/service/http/errors.ts) and CLI exit code. */
export type ServiceErrorCode =
  | 'bad_input' // invalid options, shapes, paths (HTTP 400, CLI exit 2)
  | 'bad_model' // unreadable / not ONNX / truncated (HTTP 422, CLI exit 2)
  | 'not_found' // unknown build id, missing file (HTTP 404, CLI exit 2)
  | 'conflict' // e.g. engine requested before the build succeeded (HTTP 409)
  | 'internal'; // a bug (HTTP 500, CLI exit 1)

export interface StartBuildInput {
  modelPath: string;
  /** Where the engine goes. Default: a file in the service's output folder. */
  outputPath?: string;
  options?: BuildOptionsInput;
  /** Cancel with reason "timeout" when the build runs longer than this. */
  timeBudgetSeconds?: number;
  /**
   * The name the user knows the model by (an upload's own file name, while the server stores it
   * under a generated one): shown as the record's `model.fileName`. Display only, never a path.
   */
  modelDisplayName?: string;
  /** Build farm only: labels the machine must have, e.g. {gpu: 'A100', trt: '10.16.0'}. */
  target?: Record<string, string>;
  /** Build farm only: extra attempts when the machine running the build is lost (default 0). */
  retries?: number;
}

/**
 * The stream contract: a subscription starts from a complete state and continues without a
 * silent gap. Without `afterSeq`: `view` is the state and events follow with seq > view.seq.
 * With `afterSeq`: the kept events after it are replayed first, or, when some of them are no
 * longer kept, `reset` is true and the subscriber must replace what it has with `view`; events
 * then follow view.seq. A subscriber dropped for falling behind (onOverflow) resumes the same way.
 */
export interface Subscription {
  /** The build's record now (state, options, outcome; no phases). */
  readonly snapshot: BuildRecord;
  /** The build view now, complete (apps/shared/build-view.ts); its seq is snapshot.lastSeq. */
  readonly view: BuildViewSnapshot;
  /** True when the events after `afterSeq` are no longer all kept: start over from `view`. */
  readonly reset: boolean;
  unsubscribe(): void;
}

export interface SubscribeOpts {
  /** Resume after this seq (SSE Last-Event-ID; -1 asks for every event kept). */
  afterSeq?: number;
  /**
   * An event callback returning a promise is busy until it settles (events wait, steps
   * coalesced); past this many waiting events the subscriber is dropped (default 100 000).
   */
  maxBacklog?: number;
  /** The same in bytes of waiting events (apps/shared/event-bytes.ts; default 32 MiB). */
  maxBacklogBytes?: number;
  /** Dropped for falling behind; `lastSeq` is the last event it got: subscribe again after it. */
  onOverflow?: (lastSeq: number) => void;
  /**
   * While the callback's promise is pending the build worker holds its next batch (explicit
   * back-pressure to the worker): for a local reader that must get every event (CLI --json).
   */
  pacesBuild?: boolean;
}

/** What `startMatrix` takes: one build's input, and the targets to build it for. */
export type StartMatrixInput = Omit<StartBuildInput, 'target'> & { targets: Array<Record<string, string>> };

/**
 * The build service's calls, each in the form the service answers it in its own process (some at
 * once, some as a promise). Optional calls are those one kind of service lacks: `LocalServiceCalls`
 * and `FarmServiceCalls` below say which kind has which, and each service is checked against its own.
 */
export interface BuildServiceCalls {
  listBackends(): Promise<BackendInfo[]>;
  /**
   * The knob database of the backend `choice` resolves to, read from the library when asked
   * (TensorRT 11.1+; it creates a builder, off the JS thread, and is kept on disk). Absent where
   * the service cannot ask a local library (the farm).
   */
  readBuildRoutes?(choice?: BackendChoice): Promise<BuildRoutesRead>;
  /** Reads the model's summary. Throws ServiceError('bad_model' | 'not_found'). */
  inspectModel(modelPath: string): Promise<ModelSummary>;
  /**
   * Validates everything it can before queueing (model readable, shapes given for every dynamic
   * input, output directory writable) and throws ServiceError('bad_input'|'bad_model') otherwise.
   */
  startBuild(input: StartBuildInput): Promise<BuildRecord>;
  getBuild(id: string): BuildRecord | undefined;
  /** Oldest first. */
  listBuilds(): BuildRecord[];
  /** False when the build is unknown or already finished; a second call escalates (kills the worker). */
  cancelBuild(id: string, reason?: CancelReason): boolean;
  /** The record and view now, then every later event in seq order (see Subscription). */
  subscribe(id: string, onEvents: (events: BuildEvent[]) => unknown, opts?: SubscribeOpts): Subscription;
  /**
   * The build view's complete snapshot (`GET /api/builds/{id}/view`); undefined for an unknown
   * build. For a build whose details were evicted, a view of its outcome alone (no rows).
   */
  getView?(id: string): BuildViewSnapshot | undefined;
  /** Resolves when the build reaches a final state. */
  waitForResult(id: string): Promise<BuildFinished>;
  /** Path of the finished engine, when the build succeeded and the file is still the one it wrote. */
  enginePath(id: string): string | undefined;
  /**
   * True when the build finished long enough ago that only its summary is kept: its view has no
   * phases and a subscription replays nothing. Optional for implementations that keep everything.
   */
  detailsEvicted?(id: string): boolean;
  /**
   * Build farm only (absent on the local service): one build per target, in the targets' order.
   * Throws ServiceError('bad_input') like startBuild.
   */
  startMatrix?(input: StartMatrixInput): Promise<BuildRecord[]>;
  /** Build farm only: workers, queues and recent endings (GET /api/farm). */
  farmStatus?(): Promise<FarmStatus>;
  /**
   * Build farm only: the same view now and whenever it changes (GET /api/farm/events, the contract
   * in apps/shared/farm-stream.ts): `cb` gets each status with its version. Returns the unsubscribe.
   */
  subscribeFarm?(cb: (status: FarmStatus, version: number) => void): () => void;
  /**
   * Engines in the service's default output folder (only there), newest first. Optional: the
   * build farm has no such folder.
   */
  listEngines?(): EngineFile[];
  /**
   * Deletes engines from the default output folder by plain file name; refuses (with a reason)
   * paths, non-engines, non-regular files and files an unfinished build writes. Throws
   * ServiceError('bad_input') when `names` is not a non-empty array of strings.
   */
  deleteEngines?(names: string[]): DeleteEnginesResult;
  /** The default output folder itself (absent on the build farm): where listed names live. */
  engineFolder?(): string;
  /** Cancels queued and running builds (reason "shutdown"), waits for workers to exit. */
  shutdown(): Promise<void>;
}

/** The calls only a service that builds on its own machine has (apps/service/build-service.ts). */
export type LocalServiceCalls = BuildServiceCalls &
  Required<Pick<BuildServiceCalls, 'readBuildRoutes' | 'getView' | 'detailsEvicted' | 'listEngines' | 'deleteEngines' | 'engineFolder'>>;

/** The calls only the build farm has (apps/farm/queue-service.ts). */
export type FarmServiceCalls = BuildServiceCalls & Required<Pick<BuildServiceCalls, 'getView' | 'startMatrix' | 'farmStatus' | 'subscribeFarm'>>;

/** A call as a client in another process makes it: the same arguments, the answer always a promise. */
export type Remote<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** What a call answers, once it has answered (a client's `Remote` call resolves with it). */
export type Answer<K extends keyof BuildServiceCalls> = Awaited<ReturnType<NonNullable<BuildServiceCalls[K]>>>;

/** These calls of the service, as a client in another process makes them (see Remote). */
export type RemoteCalls<K extends keyof BuildServiceCalls> = { [P in K]-?: Remote<NonNullable<BuildServiceCalls[P]>> };
