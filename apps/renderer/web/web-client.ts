// BuildClient for the browser, against `trt-build-studio serve` (docs/http-api.md). Auth is the
// HttpOnly cookie the server sets when the page is opened through its `?token=` link; fetch sends
// it because everything is same-origin (the event stream too: see sse-reader.ts for why it is
// read with fetch). Open becomes an upload, Save a download.
import type { BuildClient, ModelRef, SavedEngine } from '../../shared/build-client.js';
import type { BackendInfo, BuildEvent, BuildOptionsInput, BuildRecord } from '../../shared/protocol.js';
import { defaultYielder, feedInPieces } from './chunk-feed.js';
import { SseChunkParser } from './sse-reader.js';

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);
/** Reconnects in a row before the stream is reported lost. */
const MAX_STREAM_RETRIES = 5;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface WebClientDeps {
  fetch: typeof fetch;
  document: Document;
  /** Origin-relative API root; '' in production. */
  base?: string;
}

export class WebBuildClient implements BuildClient {
  readonly capabilities = { host: 'web', nativeDialogs: false, recentFiles: false } as const;
  private readonly base: string;

  constructor(private readonly deps: WebClientDeps) {
    this.base = deps.base ?? '';
  }

  listBackends(): Promise<BackendInfo[]> {
    return this.json<BackendInfo[]>('GET', '/api/backends');
  }

  async openModel(): Promise<ModelRef | null> {
    const file = await pickFile(this.deps.document, '.onnx,application/octet-stream');
    return file ? this.openDroppedFile(file) : null;
  }

  async openDroppedFile(file: File): Promise<ModelRef> {
    const body = new FormData();
    body.append('model', file, file.name);
    const ref = await this.json<ModelRef>('POST', '/api/models', body);
    // The server names the upload after its own copy; the user knows it by the file's name.
    return { ...ref, displayName: file.name || ref.displayName };
  }

  async startBuild(model: ModelRef, options: BuildOptionsInput, run?: { timeBudgetSeconds?: number }): Promise<{ id: string }> {
    const body = { modelPath: model.path, options, ...(run?.timeBudgetSeconds ? { timeBudgetSeconds: run.timeBudgetSeconds } : {}) };
    return this.json<{ id: string }>('POST', '/api/builds', JSON.stringify(body), {
      'content-type': 'application/json',
    });
  }

  async cancelBuild(id: string): Promise<void> {
    try {
      await this.json('POST', `/api/builds/${encodeURIComponent(id)}/cancel`);
    } catch (e) {
      // 409: it finished on its own while the request was in flight; nothing left to stop.
      if (!(e instanceof HttpError && e.status === 409)) throw e;
    }
  }

  listBuilds(): Promise<BuildRecord[]> {
    return this.json<BuildRecord[]>('GET', '/api/builds');
  }

  getBuild(id: string): Promise<BuildRecord> {
    return this.json<BuildRecord>('GET', `/api/builds/${encodeURIComponent(id)}`);
  }

  subscribe(
    id: string,
    handlers: { onSnapshot(record: BuildRecord): void; onEvents(events: BuildEvent[]): void; onError?(err: Error): void },
  ): () => void {
    const url = `${this.base}/api/builds/${encodeURIComponent(id)}/events`;
    const abort = new AbortController();
    let finished = false;
    let retries = 0;
    const parser = new SseChunkParser({
      onNamed: (event, data) => {
        if (event !== 'snapshot') return;
        let rec: BuildRecord;
        try {
          rec = JSON.parse(data) as BuildRecord;
        } catch (e) {
          handlers.onError?.(new Error(`Bad snapshot from the build service: ${(e as Error).message}`));
          return;
        }
        handlers.onSnapshot(rec);
        // A finished build's stream still replays its retained events (the log), then ends.
        if (FINAL_STATES.has(rec.state)) finished = true;
      },
      onMessages: (values) => {
        // Not re-validated with the zod schemas here: the service validated them at its process
        // boundary, this is its own origin, and at 100k events/s validation would cost more
        // than everything else the page does with them.
        const events = values as BuildEvent[];
        handlers.onEvents(events);
        // The stream ends after build.finished; do not reconnect then.
        if (events.some((e) => e.type === 'build.finished')) finished = true;
      },
      onBadMessage: (_data, err) => handlers.onError?.(new Error(`Bad event from the build service: ${err.message}`)),
    });

    const yielder = defaultYielder();
    const push = (piece: string) => parser.push(piece);
    const run = async () => {
      while (!finished && !abort.signal.aborted) {
        try {
          const headers: Record<string, string> = { accept: 'text/event-stream' };
          // Resume after what we have: the server sends a snapshot (which a consumer with state
          // of its own ignores) and replays newer events. The first time, -1: everything the
          // service retains is replayed, which is how a late joiner gets the log (the snapshot
          // carries only the tree).
          headers['last-event-id'] = parser.lastId ?? '-1';
          const res = await this.deps.fetch(url, { headers, credentials: 'same-origin', signal: abort.signal, cache: 'no-store' });
          // 204: the build ended and we have everything up to its last event; nothing will come.
          if (res.status === 204) {
            finished = true;
            break;
          }
          if (!res.ok || !res.body) throw errorFromResponse(res.status, await res.text().catch(() => ''));
          retries = 0;
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            await feedInPieces(decoder.decode(value, { stream: true }), push, yielder, () => abort.signal.aborted);
            if (abort.signal.aborted) return;
          }
        } catch (e) {
          if (abort.signal.aborted) return;
          // 4xx will not get better by retrying (unknown build, signed out).
          if ((e instanceof HttpError && e.status >= 400 && e.status < 500) || ++retries > MAX_STREAM_RETRIES) {
            handlers.onError?.(new Error(`Lost the connection to the build service: ${(e as Error).message}`));
            return;
          }
        }
        if (!finished && !abort.signal.aborted) await sleep(Math.min(5000, 250 * 2 ** retries));
      }
    };
    void run();
    return () => abort.abort();
  }

  async saveEngine(id: string): Promise<SavedEngine | null> {
    const rec = await this.getBuild(id);
    if (!rec.engineAvailable) {
      throw new Error(rec.state === 'succeeded' ? 'The engine file is no longer available on the server.' : 'This build has no engine to save.');
    }
    const name = baseName(rec.outputPath ?? rec.outcome?.outputPath ?? '') || `${id}.engine`;
    // A plain link: the browser streams the file to disk; engines can be gigabytes, so it is
    // never pulled into page memory.
    const a = this.deps.document.createElement('a');
    a.href = `${this.base}/api/builds/${encodeURIComponent(id)}/engine`;
    a.download = name;
    a.rel = 'noopener';
    this.deps.document.body.appendChild(a);
    a.click();
    a.remove();
    return { location: name, bytes: rec.outcome?.engineBytes ?? 0 };
  }

  private async json<T>(method: string, path: string, body?: BodyInit, headers?: Record<string, string>): Promise<T> {
    let res: Response;
    try {
      res = await this.deps.fetch(`${this.base}${path}`, { method, body, headers, credentials: 'same-origin' });
    } catch (e) {
      throw new Error(`Could not reach the build service: ${(e as Error).message}`);
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

export function errorFromResponse(status: number, text: string): HttpError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return new HttpError(status, body.error.code ?? 'internal', body.error.message);
  } catch {
    // not JSON: fall through to a generic message
  }
  if (status === 401) return new HttpError(401, 'unauthorized', 'Not signed in: open the link with ?token=… that `serve` printed.');
  return new HttpError(status, 'internal', `The build service answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
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
