// BuildClient for the browser, against `trt-build-studio serve` (docs/http-api.md). Auth is the
// HttpOnly cookie the server sets when the page is opened through its `?token=` link; fetch and
// EventSource send it because everything is same-origin. Open becomes an upload, Save a download.
import type { BuildClient, ModelRef, SavedEngine } from '../../shared/build-client.js';
import type { BackendInfo, BuildEvent, BuildOptionsInput, BuildRecord } from '../../shared/protocol.js';

const FINAL_STATES = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);

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
  EventSource: typeof EventSource;
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

  async startBuild(model: ModelRef, options: BuildOptionsInput): Promise<{ id: string }> {
    return this.json<{ id: string }>('POST', '/api/builds', JSON.stringify({ modelPath: model.path, options }), {
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
    const es = new this.deps.EventSource(`${this.base}/api/builds/${encodeURIComponent(id)}/events`);
    let batch: BuildEvent[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    // SSE delivers one message per task; handing them over in small batches keeps the
    // consumer's per-call work (and the contract "callers must not assume one call per event").
    const flush = () => {
      timer = undefined;
      if (batch.length === 0 || closed) return;
      const out = batch;
      batch = [];
      handlers.onEvents(out);
    };
    const close = () => {
      if (closed) return;
      flush();
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      es.close();
    };
    es.addEventListener('snapshot', (m) => {
      try {
        const rec = JSON.parse((m as MessageEvent<string>).data) as BuildRecord;
        handlers.onSnapshot(rec);
        // A finished build's stream ends right after the snapshot; do not let EventSource retry.
        if (FINAL_STATES.has(rec.state)) close();
      } catch (e) {
        handlers.onError?.(new Error(`Bad snapshot from the build service: ${(e as Error).message}`));
      }
    });
    es.onmessage = (m) => {
      let ev: BuildEvent;
      try {
        ev = JSON.parse(m.data) as BuildEvent;
      } catch (e) {
        handlers.onError?.(new Error(`Bad event from the build service: ${(e as Error).message}`));
        return;
      }
      batch.push(ev);
      // The stream ends after build.finished; EventSource would otherwise reconnect forever.
      if (ev.type === 'build.finished') close();
      else if (timer === undefined) timer = setTimeout(flush, 0);
    };
    es.onerror = () => {
      // CONNECTING means EventSource is retrying with Last-Event-ID on its own; only a closed
      // stream (the server refused, e.g. 401/404) is an error worth showing.
      if (!closed && es.readyState === this.deps.EventSource.CLOSED) {
        close();
        handlers.onError?.(new Error('Lost the connection to the build service (event stream closed).'));
      }
    };
    return close;
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
