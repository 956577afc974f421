// The HTTP/SSE client against scripted fetch/EventSource doubles. The real server is exercised
// end to end by e2e/ (web project); these pin the protocol handling that is easy to get wrong:
// error bodies, batching, closing the stream so EventSource does not reconnect forever.
import { describe, expect, it } from 'vitest';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { errorFromResponse, HttpError, WebBuildClient } from '../web/web-client.js';

class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static last: FakeEventSource;
  readyState = 1;
  onmessage: ((m: { data: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  private listeners = new Map<string, (m: { data: string }) => void>();
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, fn: (m: { data: string }) => void) {
    this.listeners.set(type, fn);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  snapshot(rec: BuildRecord) {
    this.listeners.get('snapshot')!({ data: JSON.stringify(rec) });
  }
  message(ev: unknown) {
    this.onmessage!({ data: typeof ev === 'string' ? ev : JSON.stringify(ev) });
  }
}

type Call = { url: string; method: string; body: unknown; headers: unknown };

function client(answers: Array<[number, unknown]>) {
  const calls: Call[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    calls.push({ url, method: init.method!, body: init.body, headers: init.headers });
    const [status, body] = answers.shift() ?? [500, 'no answer scripted'];
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
  const c = new WebBuildClient({ fetch: fetchFn, EventSource: FakeEventSource as unknown as typeof EventSource, document: {} as Document });
  return { c, calls };
}

const rec = (over: Partial<BuildRecord> = {}): BuildRecord => ({
  id: 'b1',
  state: 'running',
  modelPath: '/srv/u/1.onnx',
  options: { backend: 'simulated' },
  queuedAt: new Date(0).toISOString(),
  lastSeq: 0,
  phases: [],
  engineAvailable: false,
  ...over,
});
const ev = (seq: number, type = 'log'): BuildEvent =>
  (type === 'build.finished'
    ? { v: 1, buildId: 'b1', seq, t: seq, type, status: 'succeeded', durationMs: seq }
    : { v: 1, buildId: 'b1', seq, t: seq, type: 'log', severity: 'info', message: `m${seq}` }) as BuildEvent;

describe('WebBuildClient', () => {
  it('uploads a dropped model as multipart field "model" and keeps the original name', async () => {
    const summary = { fileName: 'x' };
    const { c, calls } = client([[201, { path: '/srv/uploads/abc.onnx', displayName: 'abc.onnx', summary }]]);
    const file = new File([new Uint8Array([1, 2, 3])], 'resnet50.onnx');
    const ref = await c.openDroppedFile(file);
    expect(ref).toEqual({ path: '/srv/uploads/abc.onnx', displayName: 'resnet50.onnx', summary });
    expect(calls[0].url).toBe('/api/models');
    expect(calls[0].method).toBe('POST');
    const body = calls[0].body as FormData;
    expect((body.get('model') as File).name).toBe('resnet50.onnx');
  });

  it("turns the server's JSON error into an Error with the server's message", async () => {
    const { c } = client([[422, { error: { code: 'bad_model', message: 'broken.onnx is not an ONNX model: truncated protobuf at byte 17' } }]]);
    await expect(c.openDroppedFile(new File(['junk'], 'broken.onnx'))).rejects.toThrow('broken.onnx is not an ONNX model: truncated protobuf at byte 17');
    expect(errorFromResponse(401, '')).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/token/) });
    expect(errorFromResponse(502, '<html>bad gateway</html>').message).toMatch(/answered 502/);
  });

  it('starts a build with the model path and options as JSON', async () => {
    const { c, calls } = client([[201, { id: 'b7' }]]);
    const out = await c.startBuild({ path: '/srv/u/1.onnx', displayName: 'm.onnx', summary: {} as never }, { backend: 'simulated', optLevel: 2 });
    expect(out).toEqual({ id: 'b7' });
    expect(JSON.parse(calls[0].body as string)).toEqual({ modelPath: '/srv/u/1.onnx', options: { backend: 'simulated', optLevel: 2 } });
    expect(calls[0].headers).toEqual({ 'content-type': 'application/json' });
  });

  it('treats 409 on cancel as "already finished", other errors as errors', async () => {
    const { c } = client([
      [409, { error: { code: 'conflict', message: 'build b1 already finished' } }],
      [404, { error: { code: 'not_found', message: 'no build b9' } }],
    ]);
    await expect(c.cancelBuild('b1')).resolves.toBeUndefined();
    await expect(c.cancelBuild('b9')).rejects.toBeInstanceOf(HttpError);
  });

  it('delivers the snapshot, then events in batches, and closes after build.finished', async () => {
    const { c } = client([]);
    const snaps: BuildRecord[] = [];
    const batches: BuildEvent[][] = [];
    const errors: Error[] = [];
    c.subscribe('b 1', { onSnapshot: (r) => snaps.push(r), onEvents: (e) => batches.push(e), onError: (e) => errors.push(e) });
    const es = FakeEventSource.last;
    expect(es.url).toBe('/api/builds/b%201/events');
    es.snapshot(rec());
    for (let i = 1; i <= 5; i++) es.message(ev(i));
    await new Promise((r) => setTimeout(r, 5));
    es.message(ev(6));
    es.message(ev(7, 'build.finished'));
    expect(snaps).toHaveLength(1);
    expect(batches.map((b) => b.map((e) => e.seq))).toEqual([[1, 2, 3, 4, 5], [6, 7]]);
    expect(es.closed).toBe(true);
    es.onerror?.(); // the server ending the stream must not surface as an error once closed
    expect(errors).toEqual([]);
  });

  it('closes right after the snapshot of a build that already finished', () => {
    const { c } = client([]);
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: () => undefined });
    FakeEventSource.last.snapshot(rec({ state: 'crashed' }));
    expect(FakeEventSource.last.closed).toBe(true);
  });

  it('reports a refused stream, but not EventSource retrying on its own', () => {
    const { c } = client([]);
    const errors: Error[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => errors.push(e) });
    const es = FakeEventSource.last;
    es.readyState = FakeEventSource.CONNECTING;
    es.onerror!();
    expect(errors).toEqual([]);
    es.readyState = FakeEventSource.CLOSED;
    es.onerror!();
    expect(errors[0].message).toMatch(/connection to the build service/);
    es.message('{not json');
  });

  it('refuses to save when the build has no engine', async () => {
    const { c } = client([[200, rec({ state: 'cancelled' })]]);
    await expect(c.saveEngine('b1')).rejects.toThrow('This build has no engine to save.');
  });
});
