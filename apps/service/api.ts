// The build service's public surface. The CLI, the HTTP/SSE server, the MCP server and Electron
// main all sit on this one interface (implemented by ./build-service.ts), so a build behaves the
// same whichever surface started it.
import type {
  BackendInfo,
  BuildEvent,
  BuildFinished,
  BuildOptionsInput,
  BuildRecord,
  CancelReason,
  ModelSummary,
} from '../shared/protocol.js';

export type ServiceErrorCode =
  | 'bad_input' // invalid options, shapes, paths (HTTP 400, CLI exit 2)
  | 'bad_model' // unreadable / not ONNX / truncated (HTTP 422, CLI exit 2)
  | 'not_found' // unknown build id, missing file (HTTP 404, CLI exit 2)
  | 'conflict' // e.g. engine requested before the build succeeded (HTTP 409)
  | 'internal'; // a bug (HTTP 500, CLI exit 1)

/** An error whose message is fit to show a user as it is. */
export class ServiceError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

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

export interface Subscription {
  /** The build as it stands now (tree snapshot, state); live events follow with seq > lastSeq. */
  readonly snapshot: BuildRecord;
  unsubscribe(): void;
}

export interface BuildServiceApi {
  listBackends(): Promise<BackendInfo[]>;
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
  /**
   * Snapshot now, then every later event in seq order. With `afterSeq`, events with seq > afterSeq
   * that are still retained are replayed first (SSE Last-Event-ID resume).
   */
  subscribe(id: string, onEvents: (events: BuildEvent[]) => void, opts?: { afterSeq?: number }): Subscription;
  /** Resolves when the build reaches a final state. */
  waitForResult(id: string): Promise<BuildFinished>;
  /** Path of the finished engine, when the build succeeded and the file still exists. */
  enginePath(id: string): string | undefined;
  /**
   * True when the build finished long enough ago that only its summary is kept: its record has no
   * phases and a subscription replays nothing. Optional for implementations that keep everything.
   */
  detailsEvicted?(id: string): boolean;
  /**
   * Build farm only (absent on the local service): one build per target, in the targets' order.
   * Throws ServiceError('bad_input') like startBuild.
   */
  startMatrix?(input: Omit<StartBuildInput, 'target'> & { targets: Array<Record<string, string>> }): Promise<BuildRecord[]>;
  /** Cancels queued and running builds (reason "shutdown"), waits for workers to exit. */
  shutdown(): Promise<void>;
}
