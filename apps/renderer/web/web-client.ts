// BuildClient for the browser, against `trt-build-studio serve` (docs/http-api.md). Auth is the
// HttpOnly cookie the server sets when the page is opened through its `?token=` link; fetch sends
// it because everything is same-origin (the event stream too: see sse-reader.ts for why it is
// read with fetch). Open becomes an upload, Save a download.
import type { FarmStatus } from '../../shared/farm-status.js';
import type { BuildClient, BuildLayers, BuildStreamHandlers, DeleteEnginesResult, EngineFile, ModelRef, SavedEngine, StartBuildRun } from '../../shared/build-client.js';
import type { CheckResult } from '../../shared/engine-manifest.js';
import type { BuildComparison } from '../../shared/build-compare.js';
import { VIEW_VERSION, type BuildViewSnapshot } from '../../shared/build-view.js';
import type { BuildRoutesRead } from '../../shared/build-routes.js';
import type { BackendChoice, BackendInfo, BuildEvent, BuildOptionsInput, BuildRecord } from '../../shared/protocol.js';
import { StreamCursor } from '../../shared/stream-cursor.js';
import { apiPath } from '../../shared/http-paths.js';
import { FARM_STREAM_EVENT, farmStatusProblem } from '../../shared/farm-stream.js';
import { defaultYielder, feedInPieces, readBodyText } from './chunk-feed.js';
import { parseMessages, SseChunkParser, type SseHandlers } from './sse-reader.js';
import type { StreamMessage, StreamRequest } from './event-stream-reader.js';

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);
/** Reconnects in a row before the stream is reported lost. */
const MAX_STREAM_RETRIES = 5;

/**
 * The page's side of a failed request: "the build service answered this status", with the code and
 * message of its JSON error body (docs/http-api.md). The server's side, "answer with this status",
 * is ErrorResponse (apps/service/http/errors.ts).
 */
export class ServiceAnswerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceAnswerError';
  }
}

/** A dedicated worker running event-stream-reader.ts (event-stream.worker.ts), as the page sees it. */
export interface StreamWorker {
  postMessage(m: StreamRequest): void;
  onmessage: ((e: { data: StreamMessage }) => void) | null;
  onerror: ((e: { message?: string }) => void) | null;
  terminate(): void;
}

export interface WebClientDeps {
  fetch: typeof fetch;
  document: Document;
  /** Origin-relative API root; '' in production. */
  base?: string;
  /**
   * Starts an event-stream worker: build streams are then read and framed off the page's
   * thread. Without it (tests, a page without workers) the page reads them itself.
   */
  streamWorker?: () => StreamWorker;
}

export class WebBuildClient implements BuildClient {
  readonly capabilities = { host: 'web', nativeDialogs: false, recentFiles: false } as const;
  private readonly base: string;

  constructor(private readonly deps: WebClientDeps) {
    this.base = deps.base ?? '';
  }

  listBackends(): Promise<BackendInfo[]> {
    return this.json<BackendInfo[]>('GET', apiPath('backends'));
  }

  readBuildRoutes(backend: BackendChoice): Promise<BuildRoutesRead> {
    return this.json<BuildRoutesRead>('GET', apiPath('buildRoutes', {}, { backend }));
  }

  async openModel(): Promise<ModelRef | null> {
    const file = await pickFile(this.deps.document, '.onnx,application/octet-stream');
    return file ? this.openDroppedFile(file) : null;
  }

  /** A model already on the server's disk (Rebuild from an engine's manifest names its model by path). */
  openModelPath(path: string): Promise<ModelRef> {
    return this.json<ModelRef>('POST', apiPath('models'), JSON.stringify({ path }), { 'content-type': 'application/json' });
  }

  async openDroppedFile(file: File): Promise<ModelRef> {
    const body = new FormData();
    body.append('model', file, file.name);
    const ref = await this.json<ModelRef>('POST', apiPath('models'), body);
    // The server names the upload after its own copy; the user knows it by the file's name.
    return { ...ref, displayName: file.name || ref.displayName };
  }

  async startBuild(model: ModelRef, options: BuildOptionsInput, run?: StartBuildRun): Promise<{ id: string }> {
    const body = { modelPath: model.path, options, ...(run?.timeBudgetSeconds ? { timeBudgetSeconds: run.timeBudgetSeconds } : {}) };
    return this.json<{ id: string }>('POST', apiPath('builds'), JSON.stringify(body), {
      'content-type': 'application/json',
    });
  }

  async cancelBuild(id: string): Promise<void> {
    try {
      await this.json('POST', apiPath('buildCancel', { id }));
    } catch (e) {
      // 409: it finished on its own while the request was in flight; nothing left to stop.
      if (!(e instanceof ServiceAnswerError && e.status === 409)) throw e;
    }
  }

  listBuilds(): Promise<BuildRecord[]> {
    return this.json<BuildRecord[]>('GET', apiPath('builds'));
  }

  getBuild(id: string): Promise<BuildRecord> {
    return this.json<BuildRecord>('GET', apiPath('build', { id }));
  }

  subscribe(id: string, handlers: BuildStreamHandlers): () => void {
    const url = `${this.base}${apiPath('buildEvents', { id })}`;
    const abort = new AbortController();
    let retries = 0;
    // The stream contract lives in the cursor (apps/shared/stream-cursor.ts): record, reset,
    // events in order and once; this function only reads the wire and reconnects. A bare cursor,
    // not a LiveView: the page this feeds (store/live-build.ts) folds through its own LiveView,
    // and folding here too would fold every event twice; the cursor keeps the resume point.
    const cursor = new StreamCursor({
      applySnapshot: (record, view) => {
        if (!record) {
          handlers.onError?.(new Error('The build service sent a view without the build it belongs to.'));
          return;
        }
        handlers.onSnapshot(record, view);
      },
      applyRecord: (record) => handlers.onSnapshot(record),
      // Not re-validated with the zod schemas here: the service validated them at its process
      // boundary, this is its own origin, and at 100k events/s validation would cost more
      // than everything else the page does with them.
      applyEvents: (events) => handlers.onEvents(events),
    });
    const sse: SseHandlers = {
      onNamed: (event, data) => {
        if (event !== 'snapshot' && event !== 'reset') return;
        let value: unknown;
        try {
          value = JSON.parse(data);
        } catch (e) {
          handlers.onError?.(new Error(`Bad ${event} from the build service: ${(e as Error).message}`));
          return;
        }
        if (event === 'snapshot') {
          cursor.noteRecord(value as BuildRecord);
          return;
        }
        const problem = viewProblem(value, id);
        if (problem) {
          handlers.onError?.(new Error(`Bad reset from the build service: ${problem}`));
          return;
        }
        cursor.reset(value as BuildViewSnapshot);
      },
      onMessages: (values) => cursor.events(values as BuildEvent[]),
      onBadMessage: (_data, err) => handlers.onError?.(new Error(`Bad event from the build service: ${err.message}`)),
    };
    const parser = new SseChunkParser(sse);
    // Nothing is known at first (seq -1): the service replays every event it keeps (a late
    // joiner gets the log too), or resets us with its view when the early ones are gone.
    cursor.startEmpty();

    const yielder = defaultYielder();
    const push = (piece: string) => parser.push(piece);
    /** One connection read on the page's thread: fetch, decode, frame and parse here. */
    const readHere = async (lastEventId: string): Promise<'ended' | 'no-content'> => {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      headers['last-event-id'] = lastEventId;
      const res = await this.deps.fetch(url, { headers, credentials: 'same-origin', signal: abort.signal, cache: 'no-store' });
      // 204: the build ended and we have everything up to its last event; nothing will come.
      if (res.status === 204) return 'no-content';
      if (!res.ok || !res.body) throw errorFromResponse(res.status, await res.text().catch(() => ''));
      retries = 0;
      const stopped = () => abort.signal.aborted;
      await readBodyText(res.body, (text) => feedInPieces(text, push, yielder, stopped), stopped);
      return 'ended';
    };
    // The stream worker (event-stream-reader.ts), where the host gives one: it reads and frames
    // the stream, the page parses each piece's events with one JSON.parse. Made at the first
    // connection, ended with the subscription; a worker that fails (it could not load) is
    // dropped and the connections after it are read here.
    let worker: StreamWorker | null = null;
    let workerFailed = false;
    abort.signal.addEventListener('abort', () => worker?.terminate());
    // Handled messages are acknowledged together, once the messages already queued have run.
    let handled = 0;
    const ack = (w: StreamWorker) => {
      if (handled++ > 0) return;
      setTimeout(() => {
        const count = handled;
        handled = 0;
        if (!abort.signal.aborted) w.postMessage({ type: 'ack', count });
      }, 0);
    };
    const readInWorker = (w: StreamWorker, lastEventId: string): Promise<'ended' | 'no-content'> =>
      new Promise((resolve, reject) => {
        abort.signal.addEventListener('abort', () => resolve('ended'), { once: true });
        w.onmessage = (e) => {
          const m = e.data;
          if (m.type === 'status') {
            if (m.status === 204) resolve('no-content');
            else if (!m.ok) reject(errorFromResponse(m.status, m.body ?? ''));
            else retries = 0;
          } else if (m.type === 'named') {
            sse.onNamed(m.event, m.data);
            ack(w);
          } else if (m.type === 'messages') {
            const values = parseMessages(m.batch, sse.onBadMessage);
            if (values.length > 0) sse.onMessages(values);
            ack(w);
          } else if (m.type === 'end') resolve('ended');
          else reject(new Error(m.message));
        };
        w.onerror = (e) => {
          workerFailed = true;
          w.terminate();
          reject(new Error(`the event stream worker failed${e.message ? `: ${e.message}` : ''}`));
        };
        w.postMessage({ type: 'open', url, lastEventId });
      });
    const run = async () => {
      while (!cursor.finished && !abort.signal.aborted) {
        try {
          const lastEventId = String(cursor.resumeAfter ?? -1);
          if (!worker && !workerFailed && this.deps.streamWorker) worker = this.deps.streamWorker();
          const how = worker && !workerFailed ? await readInWorker(worker, lastEventId) : await readHere(lastEventId);
          if (abort.signal.aborted) return;
          // 204: the build ended and we have everything up to its last event; nothing will come.
          if (how === 'no-content') break;
          // A finished build whose stream ended is over even if its last event was coalesced away.
          if (cursor.record && FINAL_STATES.has(cursor.record.state)) break;
        } catch (e) {
          if (abort.signal.aborted) return;
          // 4xx will not get better by retrying (unknown build, signed out).
          if ((e instanceof ServiceAnswerError && e.status >= 400 && e.status < 500) || ++retries > MAX_STREAM_RETRIES) {
            handlers.onError?.(new Error(`Lost the connection to the build service: ${(e as Error).message}`));
            return;
          }
        }
        if (!cursor.finished && !abort.signal.aborted) await sleep(Math.min(5000, 250 * 2 ** retries));
      }
    };
    // However the stream ends (finished, 204, given up), its worker ends with it.
    void run().finally(() => worker?.terminate());
    return () => abort.abort();
  }

  async saveEngine(id: string): Promise<SavedEngine | null> {
    const rec = await this.getBuild(id);
    if (!rec.engineAvailable) {
      throw new Error(rec.state === 'succeeded' ? 'The engine file is no longer available on the server.' : 'This build has no engine to save.');
    }
    const name = engineDownloadName(rec);
    // A plain link: the browser streams the file to disk; engines can be gigabytes, so it is
    // never pulled into page memory.
    const a = this.deps.document.createElement('a');
    a.href = `${this.base}${apiPath('buildEngine', { id })}`;
    a.download = name;
    a.rel = 'noopener';
    this.deps.document.body.appendChild(a);
    a.click();
    a.remove();
    return { location: name, bytes: rec.outcome?.engineBytes ?? 0 };
  }

  listEngines(): Promise<EngineFile[]> {
    return this.json<EngineFile[]>('GET', apiPath('engines'));
  }

  async farmStatus(): Promise<FarmStatus | null> {
    try {
      return await this.json<FarmStatus>('GET', apiPath('farm'));
    } catch (e) {
      // A serve that builds locally has no farm: not an error, just nothing to show.
      if (e instanceof ServiceAnswerError && e.status === 404) return null;
      throw e;
    }
  }

  subscribeFarm(handlers: { onStatus(status: FarmStatus | null): void; onError?(err: Error): void }): () => void {
    const abort = new AbortController();
    let retries = 0;
    // Each message is the whole status (apps/shared/farm-stream.ts): nothing to resume, a
    // reconnect simply starts with the status as it is then.
    const parser = new SseChunkParser({
      onNamed: (event, data) => {
        if (event !== FARM_STREAM_EVENT) return;
        let value: unknown;
        try {
          value = JSON.parse(data);
        } catch (e) {
          handlers.onError?.(new Error(`Bad farm status from the build service: ${(e as Error).message}`));
          return;
        }
        const problem = farmStatusProblem(value);
        if (problem) handlers.onError?.(new Error(`Bad farm status from the build service: ${problem}`));
        else handlers.onStatus(value as FarmStatus);
      },
      onMessages: () => undefined,
      onBadMessage: () => undefined,
    });
    const run = async () => {
      while (!abort.signal.aborted) {
        try {
          const res = await this.deps.fetch(`${this.base}${apiPath('farmEvents')}`, {
            headers: { accept: 'text/event-stream' },
            credentials: 'same-origin',
            signal: abort.signal,
            cache: 'no-store',
          });
          // A serve that builds locally has no farm: not an error, just nothing to show.
          if (res.status === 404) return handlers.onStatus(null);
          if (!res.ok || !res.body) throw errorFromResponse(res.status, await res.text().catch(() => ''));
          retries = 0;
          await readBodyText(res.body, (text) => parser.push(text));
        } catch (e) {
          if (abort.signal.aborted) return;
          if ((e instanceof ServiceAnswerError && e.status >= 400 && e.status < 500) || ++retries > MAX_STREAM_RETRIES) {
            handlers.onError?.(new Error(`Lost the connection to the build service: ${(e as Error).message}`));
            return;
          }
        }
        // The stream ended (serve restarting) or failed: connect again after a pause.
        if (!abort.signal.aborted) await sleep(Math.min(5000, 250 * 2 ** retries));
      }
    };
    void run();
    return () => abort.abort();
  }

  deleteEngines(names: string[]): Promise<DeleteEnginesResult> {
    return this.json<DeleteEnginesResult>('POST', apiPath('enginesDelete'), JSON.stringify({ names }), { 'content-type': 'application/json' });
  }

  buildLayers(id: string): Promise<BuildLayers> {
    return this.json<BuildLayers>('GET', apiPath('buildLayers', { id }));
  }

  compareBuilds(a: string, b: string): Promise<BuildComparison> {
    return this.json<BuildComparison>('GET', apiPath('compare', {}, { a, b }));
  }

  buildFileLinks(id: string): { engine: string; manifest: string } {
    return { engine: `${this.base}${apiPath('buildEngine', { id })}`, manifest: `${this.base}${apiPath('buildManifest', { id })}` };
  }

  checkEngine(name: string): Promise<CheckResult> {
    return this.json<CheckResult>('GET', apiPath('enginesCheck', {}, { engine: name }));
  }

  private async json<T>(method: string, path: string, body?: BodyInit, headers?: Record<string, string>): Promise<T> {
    let res: Response;
    try {
      res = await this.deps.fetch(`${this.base}${path}`, { method, body, headers, credentials: 'same-origin' });
    } catch (e) {
      throw new Error(`Could not reach the build service: ${(e as Error).message}`, { cause: e });
    }
    const text = await res.text();
    if (!res.ok) throw errorFromResponse(res.status, text);
    try {
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } catch {
      throw new Error(`The build service sent a response that is not JSON (${method} ${path}).`);
    }
  }
}

export function errorFromResponse(status: number, text: string): ServiceAnswerError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return new ServiceAnswerError(status, body.error.code ?? 'internal', body.error.message);
  } catch {
    // not JSON: fall through to a generic message
  }
  if (status === 401) return new ServiceAnswerError(401, 'unauthorized', 'Not signed in: open the link with ?token=… that `serve` printed.');
  return new ServiceAnswerError(status, 'internal', `The build service answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
}

/**
 * Why a reset's data is not a view of this build, or undefined when it is one. A shape check
 * only (the page cannot load the zod schema); BuildView.fromSnapshot checks the rows' links.
 */
export function viewProblem(value: unknown, id: string): string | undefined {
  if (!value || typeof value !== 'object') return 'not an object';
  const v = value as Partial<BuildViewSnapshot>;
  if (v.v !== VIEW_VERSION) return `view version ${String(v.v)}, expected ${VIEW_VERSION}`;
  if (v.buildId !== id) return `it describes build "${String(v.buildId)}", not "${id}"`;
  if (typeof v.seq !== 'number' || !Number.isInteger(v.seq)) return 'seq is not an integer';
  if (typeof v.status !== 'string') return 'status is missing';
  const rows = v.rows as Partial<BuildViewSnapshot['rows']> | undefined;
  if (!rows || !Array.isArray(rows.rows) || !Array.isArray(rows.open) || !Array.isArray(rows.recent)) return 'rows are missing';
  return undefined;
}

/**
 * The name the engine is saved under: the user's name for the model (an upload is stored under a
 * generated name), so `resnet 50.onnx` gives `resnet 50.sim.10.16.0.engine` when the service
 * named the engine after the model, else `resnet 50.engine`.
 */
export function engineDownloadName(rec: BuildRecord): string {
  const stored = baseName(rec.outcome?.outputPath ?? rec.outputPath ?? '');
  const shown = rec.model?.fileName;
  if (!shown) return stored || `${rec.id}.engine`;
  const stem = shown.replace(/\.onnx$/i, '');
  return stored.startsWith(`${stem}.`) ? stored : `${stem}.engine`;
}

export function baseName(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] ?? '';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Shows the browser's file picker; resolves null when the user cancels it. */
function pickFile(doc: Document, accept: string): Promise<File | null> {
  return new Promise((resolve) => {
    const input = doc.createElement('input');
    input.type = 'file';
    input.accept = accept;
    input.style.display = 'none';
    const done = (f: File | null) => {
      input.remove();
      resolve(f);
    };
    input.addEventListener('change', () => done(input.files?.[0] ?? null), { once: true });
    input.addEventListener('cancel', () => done(null), { once: true });
    doc.body.appendChild(input);
    input.click();
  });
}
