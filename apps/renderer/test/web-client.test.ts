// The HTTP/SSE client against a scripted fetch. The real server is exercised end to end by e2e/
// (web project); these pin the protocol handling that is easy to get wrong: error bodies,
// batching, stopping after build.finished, resuming with Last-Event-ID.
import { describe, expect, it } from 'vitest';
import { BuildView, type BuildViewSnapshot } from '../../shared/build-view.js';
import type { BuildEvent, BuildRecord } from '../../shared/protocol.js';
import { errorFromResponse, ServiceAnswerError, WebBuildClient, type StreamWorker } from '../web/web-client.js';
import { EventStreamReader } from '../web/event-stream-reader.js';

type Call = { url: string; method?: string; body: unknown; headers: unknown };
type Answer = [number, unknown] | ReadableStream<Uint8Array> | Error;

function client(answers: Answer[], viaWorker = false) {
  const calls: Call[] = [];
  const fetchFn = (async (url: string, init: RequestInit) => {
    calls.push({ url, method: init.method, body: init.body, headers: init.headers });
    const a = answers.shift() ?? [500, 'no answer scripted'];
    if (a instanceof Error) throw a;
    if (a instanceof ReadableStream) return new Response(a, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    const [status, body] = a;
    if (status === 204) return new Response(null, { status });
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
  const c = new WebBuildClient({ fetch: fetchFn, document: {} as Document, ...(viaWorker ? { streamWorker: () => inProcessWorker(fetchFn) } : {}) });
  return { c, calls };
}

/**
 * The stream worker with its real reader (event-stream-reader.ts), run in this process: each
 * message crosses as a structured clone in a later task, both ways, as between a page and its
 * worker. `terminate` ends it as a worker ends: nothing more is delivered.
 */
function inProcessWorker(fetchFn: typeof fetch): StreamWorker {
  let dead = false;
  const w: StreamWorker = {
    onmessage: null,
    onerror: null,
    postMessage: (m) => {
      const copy = structuredClone(m);
      setTimeout(() => !dead && reader.onRequest(copy));
    },
    terminate: () => {
      dead = true;
      reader.onRequest({ type: 'abort' });
    },
  };
  const reader = new EventStreamReader(fetchFn, (m) => {
    const copy = structuredClone(m);
    setTimeout(() => !dead && w.onmessage?.({ data: copy }));
  });
  return w;
}

/** An SSE body the test writes to chunk by chunk. */
function sseBody() {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
  const enc = new TextEncoder();
  return {
    stream,
    write: (s: string) => ctl.enqueue(enc.encode(s)),
    end: () => ctl.close(),
  };
}
const msg = (e: BuildEvent) => `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`;
const snap = (r: BuildRecord) => `event: snapshot\ndata: ${JSON.stringify(r)}\n\n`;
const tick = () => new Promise((r) => setTimeout(r, 10));
/**
 * Waits until `done()` holds (polling), at most `ms`: for what the stream worker and the reconnect
 * loop do in their own time. A fixed wait failed under load (the whole suite beside two CPU
 * burners); the assertion after it still says what was expected.
 */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !done() && Date.now() < end;) await tick();
}
const reset = (v: BuildViewSnapshot) => `event: reset\nid: ${v.seq}\ndata: ${JSON.stringify(v)}\n\n`;
/** The service's view after events 1..n (a phase opened at 1, logs after). */
function viewAt(n: number, id = 'b1'): BuildViewSnapshot {
  const v = new BuildView(id);
  v.apply({ v: 1, buildId: id, seq: 1, t: 1, type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 2, instance: 0 });
  for (let i = 2; i <= n; i++) v.apply(ev(i));
  return v.snapshot();
}

const rec = (over: Partial<BuildRecord> = {}): BuildRecord => ({
  id: 'b1',
  state: 'running',
  modelPath: '/srv/u/1.onnx',
  options: { backend: 'simulated' },
  queuedAt: new Date(0).toISOString(),
  lastSeq: 0,
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

  it('says plainly when the service cannot be reached', async () => {
    const { c } = client([new TypeError('Failed to fetch')]);
    await expect(c.listBackends()).rejects.toThrow('Could not reach the build service: Failed to fetch');
  });

  it('starts a build with the model path and options as JSON', async () => {
    const { c, calls } = client([[201, { id: 'b7' }]]);
    const out = await c.startBuild({ path: '/srv/u/1.onnx', displayName: 'm.onnx', summary: {} as never }, { backend: 'simulated', optLevel: 2 });
    expect(out).toEqual({ id: 'b7' });
    expect(JSON.parse(calls[0].body as string)).toEqual({ modelPath: '/srv/u/1.onnx', options: { backend: 'simulated', optLevel: 2 } });
    expect(calls[0].headers).toEqual({ 'content-type': 'application/json' });
  });

  it('lists engines and deletes them by name as JSON', async () => {
    const files = [{ name: 'm.sim.10.engine', bytes: 3, modifiedAt: '2026-01-01T00:00:00.000Z', simulated: true }];
    const { c, calls } = client([
      [200, files],
      [200, { deleted: ['m.sim.10.engine'], refused: [] }],
      [400, { error: { code: 'bad_input', message: 'names must name at least one engine file' } }],
    ]);
    expect(await c.listEngines()).toEqual(files);
    expect(calls[0]).toMatchObject({ url: '/api/engines', method: 'GET' });
    expect(await c.deleteEngines(['m.sim.10.engine'])).toEqual({ deleted: ['m.sim.10.engine'], refused: [] });
    expect(calls[1]).toMatchObject({ url: '/api/engines/delete', method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(calls[1].body as string)).toEqual({ names: ['m.sim.10.engine'] });
    await expect(c.deleteEngines([])).rejects.toThrow('names must name at least one engine file');
  });

  it('treats 409 on cancel as "already finished", other errors as errors', async () => {
    const { c } = client([
      [409, { error: { code: 'conflict', message: 'build b1 already finished' } }],
      [404, { error: { code: 'not_found', message: 'no build b9' } }],
    ]);
    await expect(c.cancelBuild('b1')).resolves.toBeUndefined();
    await expect(c.cancelBuild('b9')).rejects.toBeInstanceOf(ServiceAnswerError);
  });

  it('downloads the engine under the model name the user knows, not the stored upload name', async () => {
    const clicks: string[] = [];
    const doc = {
      createElement: () => ({
        click() {
          clicks.push(this.download);
        },
        remove() {},
        download: '',
        href: '',
        rel: '',
      }),
      body: { appendChild: () => undefined },
    } as unknown as Document;
    const make = (over: Partial<BuildRecord>) => {
      const fetchFn = (async () => new Response(JSON.stringify(rec({ state: 'succeeded', engineAvailable: true, ...over })), { status: 200 })) as unknown as typeof fetch;
      return new WebBuildClient({ fetch: fetchFn, document: doc });
    };
    const model = { fileName: 'résnet 50.onnx' } as BuildRecord['model'];
    await make({ model, outputPath: '/srv/engines/résnet 50.sim.10.16.0.engine' }).saveEngine('b1');
    await make({ model, outputPath: '/srv/engines/upload-a67c-b3.simulated.engine' }).saveEngine('b1');
    await make({ outputPath: '/srv/engines/plain.engine' }).saveEngine('b1');
    expect(clicks).toEqual(['résnet 50.sim.10.16.0.engine', 'résnet 50.engine', 'plain.engine']);
  });

  it('refuses to save when the build has no engine', async () => {
    const { c } = client([[200, rec({ state: 'cancelled' })]]);
    await expect(c.saveEngine('b1')).rejects.toThrow('This build has no engine to save.');
  });
});

// Every stream behaviour twice: read on the page, and through the stream worker (the browser's way).
describe.each([
  ['on the page', false],
  ['through the stream worker', true],
])('WebBuildClient build stream, read %s', (_how, viaWorker) => {
  const streamClient = (answers: Answer[]) => client(answers, viaWorker);

  it('delivers the snapshot, then one batch per chunk, and stops after build.finished', async () => {
    const body = sseBody();
    const { c, calls } = streamClient([body.stream]);
    const snaps: BuildRecord[] = [];
    const batches: BuildEvent[][] = [];
    const errors: Error[] = [];
    c.subscribe('b 1', { onSnapshot: (r) => snaps.push(r), onEvents: (e) => batches.push(e), onError: (e) => errors.push(e) });
    body.write(snap(rec()) + ': heartbeat\n\n' + [1, 2, 3].map((i) => msg(ev(i))).join(''));
    const tail = msg(ev(4)) + msg(ev(5, 'build.finished'));
    body.write(tail.slice(0, 17)); // a chunk boundary in the middle of a message
    await tick();
    body.write(tail.slice(17));
    await until(() => batches.flat().length >= 5);
    expect(calls[0].url).toBe('/api/builds/b%201/events');
    expect(snaps).toHaveLength(1);
    expect(batches.map((b) => b.map((e) => e.seq))).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(calls).toHaveLength(1); // finished: no reconnect
    expect(errors).toEqual([]);
  });

  it('does not reconnect after the snapshot of a build that already finished', async () => {
    const body = sseBody();
    const { c, calls } = streamClient([body.stream]);
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: () => undefined });
    body.write(snap(rec({ state: 'crashed' })));
    body.end();
    await tick();
    await new Promise((r) => setTimeout(r, 400));
    expect(calls).toHaveLength(1);
  });

  it('delivers a chunk far bigger than one parse piece completely and in order', async () => {
    const body = sseBody();
    const { c } = streamClient([body.stream]);
    const batches: number[][] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: (e) => batches.push(e.map((x) => x.seq)) });
    // ~3,000 events in one network chunk: several 64 KB pieces, split mid-message.
    let text = snap(rec());
    for (let i = 1; i <= 3000; i++) text += msg(ev(i));
    expect(text.length).toBeGreaterThan(3 * 64 * 1024);
    body.write(text + msg(ev(3001, 'build.finished')));
    await until(() => batches.flat().length >= 3001);
    const seqs = batches.flat();
    expect(seqs).toEqual(Array.from({ length: 3001 }, (_, i) => i + 1));
    expect(batches.length).toBeGreaterThan(1); // handed over piece by piece, not as one
  });

  it('resumes a dropped stream with Last-Event-ID, and gives up on a 404', async () => {
    const first = sseBody();
    const second = sseBody();
    const { c, calls } = streamClient([first.stream, second.stream]);
    const seqs: number[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: (e) => seqs.push(...e.map((x) => x.seq)) });
    first.write(snap(rec()) + msg(ev(1)) + msg(ev(2)));
    first.end();
    await until(() => calls.length >= 2);
    expect(calls).toHaveLength(2);
    expect(calls[0].headers).toMatchObject({ 'last-event-id': '-1' }); // first time: replay what is retained
    expect(calls[1].headers).toMatchObject({ 'last-event-id': '2' });
    second.write(msg(ev(3)) + msg(ev(4, 'build.finished')));
    await until(() => seqs.length >= 4);
    expect(seqs).toEqual([1, 2, 3, 4]);

    const gone = streamClient([[404, { error: { code: 'not_found', message: 'no build b9' } }]]);
    const errors: Error[] = [];
    gone.c.subscribe('b9', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => errors.push(e) });
    await until(() => errors.length > 0);
    expect(errors.map((e) => e.message)).toEqual(['Lost the connection to the build service: no build b9']);
    expect(gone.calls).toHaveLength(1);
  });

  it('stops without an error when the server answers 204 (nothing after our last event)', async () => {
    const first = sseBody();
    const { c, calls } = streamClient([first.stream, [204, '']]);
    const errors: Error[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => errors.push(e) });
    first.write(snap(rec()) + msg(ev(1)));
    first.end();
    await until(() => calls.length >= 2);
    expect(calls).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 700));
    expect(calls).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('reports an event that is not JSON and still delivers the others', async () => {
    const body = sseBody();
    const { c } = streamClient([body.stream]);
    const seqs: number[] = [];
    const errors: Error[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: (e) => seqs.push(...e.map((x) => x.seq)), onError: (e) => errors.push(e) });
    body.write(msg(ev(1)) + 'data: {oops\n\n' + msg(ev(2)));
    await until(() => seqs.length >= 2 && errors.length > 0);
    expect(seqs).toEqual([1, 2]);
    expect(errors[0].message).toMatch(/^Bad event from the build service/);
  });

  it('rebuilds from each reset: on connect and on a resume beyond what the service keeps', async () => {
    const first = sseBody();
    const second = sseBody();
    const { c, calls } = streamClient([first.stream, second.stream]);
    const snaps: [BuildRecord, BuildViewSnapshot | undefined][] = [];
    const seqs: number[] = [];
    const errors: Error[] = [];
    c.subscribe('b1', { onSnapshot: (r, v) => snaps.push([r, v]), onEvents: (e) => seqs.push(...e.map((x) => x.seq)), onError: (e) => errors.push(e) });
    // The service no longer kept the early events: record, reset, then the events after it.
    first.write(snap(rec({ lastSeq: 5 })) + reset(viewAt(5)) + msg(ev(6)) + msg(ev(7)));
    first.end();
    await until(() => calls.length >= 2);
    expect(calls[0].headers).toMatchObject({ 'last-event-id': '-1' });
    expect(calls[1].headers).toMatchObject({ 'last-event-id': '7' });
    // Meanwhile 8..40 went by and are gone too: a second reset; a stale event before it is dropped.
    second.write(snap(rec({ lastSeq: 40 })) + reset(viewAt(40)) + msg(ev(40)) + msg(ev(41)) + msg(ev(42, 'build.finished')));
    await until(() => seqs.length >= 4);
    // Each record as it comes (facts), then each reset with its view.
    expect(snaps.map(([r, v]) => [r.lastSeq, v?.seq])).toEqual([
      [5, undefined],
      [5, 5],
      [40, undefined],
      [40, 40],
    ]);
    expect(seqs).toEqual([6, 7, 41, 42]);
    expect(errors).toEqual([]);
    expect(calls).toHaveLength(2);
  });

  it('refuses a reset that is not a view of this build, naming why', async () => {
    const body = sseBody();
    const { c } = streamClient([body.stream]);
    const errors: Error[] = [];
    const views: unknown[] = [];
    c.subscribe('b1', { onSnapshot: (_r, v) => views.push(v), onEvents: () => undefined, onError: (e) => errors.push(e) });
    body.write(snap(rec()) + reset(viewAt(3, 'b2')) + `event: reset\ndata: {"v":99}\n\n`);
    await until(() => errors.length >= 2);
    expect(views).toEqual([undefined]); // the record only
    expect(errors.map((e) => e.message)).toEqual([
      'Bad reset from the build service: it describes build "b2", not "b1"',
      'Bad reset from the build service: view version 99, expected 1',
    ]);
  });
});

/** In-process stream workers for a client, with the ones it made and the ones it ended. */
function trackedWorkers(fetchFn: typeof fetch) {
  const made: StreamWorker[] = [];
  const terminated: StreamWorker[] = [];
  const streamWorker = () => {
    const w = inProcessWorker(fetchFn);
    const end = w.terminate.bind(w);
    w.terminate = () => {
      terminated.push(w);
      end();
    };
    made.push(w);
    return w;
  };
  return { made, terminated, streamWorker };
}

describe('WebBuildClient stream worker', () => {
  it('reads every connection of a subscription through one worker, and ends it with the subscription', async () => {
    const first = sseBody();
    const second = sseBody();
    const answers: Answer[] = [first.stream, second.stream];
    const fetchFn = (async () => new Response(answers.shift() as ReadableStream<Uint8Array>, { status: 200 })) as unknown as typeof fetch;
    const { made, terminated, streamWorker } = trackedWorkers(fetchFn);
    const c = new WebBuildClient({ fetch: fetchFn, document: {} as Document, streamWorker });
    const seqs: number[] = [];
    const off = c.subscribe('b1', { onSnapshot: () => undefined, onEvents: (e) => seqs.push(...e.map((x) => x.seq)) });
    first.write(snap(rec()) + msg(ev(1)));
    first.end();
    await until(() => answers.length === 0); // the second connection is open
    second.write(msg(ev(2)));
    await until(() => seqs.length >= 2);
    expect(seqs).toEqual([1, 2]);
    expect(made).toHaveLength(1);
    expect(terminated).toHaveLength(0);
    off();
    expect(terminated).toEqual(made);
  });

  it('ends the worker when the stream gives up (a 404), without waiting for the unsubscribe', async () => {
    const fetchFn = (async () => new Response(JSON.stringify({ error: { code: 'not_found', message: 'no build b9' } }), { status: 404 })) as unknown as typeof fetch;
    const { terminated, streamWorker } = trackedWorkers(fetchFn);
    const c = new WebBuildClient({ fetch: fetchFn, document: {} as Document, streamWorker });
    const errors: Error[] = [];
    c.subscribe('b9', { onSnapshot: () => undefined, onEvents: () => undefined, onError: (e) => errors.push(e) });
    await until(() => errors.length > 0 && terminated.length > 0);
    expect(errors.map((e) => e.message)).toEqual(['Lost the connection to the build service: no build b9']);
    expect(terminated.length).toBe(1);
  });

  it('falls back to reading on the page when the worker fails (it could not load)', async () => {
    const body = sseBody();
    const fetchFn = (async () => new Response(body.stream, { status: 200 })) as unknown as typeof fetch;
    const broken: StreamWorker = {
      onmessage: null,
      onerror: null,
      postMessage: () => setTimeout(() => broken.onerror?.({ message: 'blocked by the page policy' })),
      terminate: () => undefined,
    };
    const c = new WebBuildClient({ fetch: fetchFn, document: {} as Document, streamWorker: () => broken });
    const seqs: number[] = [];
    const errors: Error[] = [];
    c.subscribe('b1', { onSnapshot: () => undefined, onEvents: (e) => seqs.push(...e.map((x) => x.seq)), onError: (e) => errors.push(e) });
    body.write(snap(rec()) + msg(ev(1)) + msg(ev(2, 'build.finished')));
    await until(() => seqs.length >= 2);
    expect(seqs).toEqual([1, 2]);
    expect(errors).toEqual([]);
  });
});

describe('WebBuildClient farm stream', () => {
  const farm = (workers: number, at = '2026-12-01T20:00:00.000Z') => ({
    at,
    workers: Array.from({ length: workers }, (_, i) => ({ id: `w${i}`, host: 'h', pid: 1, labels: {}, slots: 1, running: [], lastHeartbeatMsAgo: 10 })),
    pools: [],
    running: [],
    recent: [],
  });
  const farmMsg = (v: number, s: unknown) => `event: farm\nid: ${v}\ndata: ${JSON.stringify(s)}\n\n`;

  it('hands over each status the farm stream sends, skips heartbeats, reconnects when the stream ends', async () => {
    const first = sseBody();
    const second = sseBody();
    const { c, calls } = client([first.stream, second.stream]);
    const got: Array<number | null> = [];
    const errors: string[] = [];
    const off = c.subscribeFarm({ onStatus: (s) => got.push(s === null ? null : s.workers.length), onError: (e) => errors.push(e.message) });
    await until(() => calls.length > 0);
    expect(calls[0].url).toBe('/api/farm/events');
    first.write(farmMsg(1, farm(0)));
    first.write(': heartbeat\n\n');
    first.write(farmMsg(2, farm(2)).slice(0, 20));
    await until(() => got.length >= 1);
    expect(got).toEqual([0]);
    first.write(farmMsg(2, farm(2)).slice(20));
    await until(() => got.length >= 2);
    expect(got).toEqual([0, 2]);
    // serve restarting ends the stream: the client connects again and takes the status it sends.
    first.end();
    await until(() => calls.length >= 2);
    expect(calls).toHaveLength(2);
    second.write(farmMsg(1, farm(3)));
    second.write(farmMsg(2, { at: 'x', workers: 'nope' }));
    await until(() => got.length >= 3 && errors.length > 0);
    expect(got).toEqual([0, 2, 3]);
    expect(errors).toEqual(['Bad farm status from the build service: "workers" is not a list']);
    off();
  });

  it('says "no farm" once on a serve that builds locally (404), and does not retry', async () => {
    const { c, calls } = client([[404, { error: { code: 'not_found', message: 'this server runs builds itself' } }]]);
    const got: unknown[] = [];
    c.subscribeFarm({ onStatus: (s) => got.push(s) });
    await until(() => got.length > 0);
    await new Promise((r) => setTimeout(r, 300)); // and nothing more: no retry
    expect(got).toEqual([null]);
    expect(calls).toHaveLength(1);
  });
});
