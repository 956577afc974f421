// The stream contract over HTTP: a client that resumes from before the events the service keeps,
// or that falls so far behind that the service drops it, is reset with the build view (never a
// silent gap), and a client rebuilding from what it receives (the shared StreamCursor) ends with
// exactly the service's view: every phase closed, nothing open forever.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildView } from '../../../shared/build-view.js';
import { BuildViewSnapshot } from '../../../shared/build-view-schema.js';
import type { BuildEvent, BuildRecord, EventBody } from '../../../shared/protocol.js';
import { StreamCursor } from '../../../shared/stream-cursor.js';
import { SseParser, type SseMessage } from '../sse-parser.js';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { FAKE_MAGIC, FakeBuildService } from './fake-service.js';
import { openSse } from './sse-client.js';

const TOKEN = 'stream-contract-token';
const auth = { Authorization: `Bearer ${TOKEN}` };
const RETAIN = 40;
const MAX_BACKLOG = 3;
const STALL_CUT_MS = 2000;

let dir: string;
let fake: FakeBuildService;
let server: BuildHttpServer;
let base: string;
let model: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-stream-contract-'));
  fs.mkdirSync(path.join(dir, 'uploads'));
  fs.mkdirSync(path.join(dir, 'renderer'));
  model = path.join(dir, 'model.onnx');
  fs.writeFileSync(model, `${FAKE_MAGIC} weights`);
  fake = new FakeBuildService(dir, RETAIN);
  server = createHttpServer({
    service: fake,
    token: TOKEN,
    uploadDir: path.join(dir, 'uploads'),
    staticDir: path.join(dir, 'renderer'),
    heartbeatMs: 60_000,
    streamMaxBacklog: MAX_BACKLOG,
    streamStallCutMs: STALL_CUT_MS,
  });
  base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startBuild(): Promise<string> {
  const res = await fetch(`${base}/api/builds`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelPath: model }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const eventsUrl = (id: string) => `${base}/api/builds/${id}/events`;

/** A client's picture of the build, rebuilt from what the stream says through the shared cursor. */
class Client {
  view: BuildView;
  resets = 0;
  readonly cursor: StreamCursor;

  constructor(id: string) {
    this.view = new BuildView(id);
    this.cursor = new StreamCursor({
      applySnapshot: (_record, view) => {
        this.resets++;
        if (view) this.view = BuildView.fromSnapshot(view);
      },
      applyEvents: (events) => {
        for (const e of events) this.view.apply(e);
      },
    });
  }

  take(messages: readonly SseMessage[]): void {
    for (const m of messages) {
      if (m.event === 'snapshot') this.cursor.noteRecord(JSON.parse(m.data) as BuildRecord);
      else if (m.event === 'reset') this.cursor.reset(BuildViewSnapshot.parse(JSON.parse(m.data)));
      else this.cursor.events([JSON.parse(m.data) as BuildEvent]);
    }
  }
}

/** The phase tree of a big build: one outer phase, many short children, one long one. */
function phases(from: number, n: number): EventBody[] {
  const out: EventBody[] = [];
  for (let i = 0; i < n; i++) {
    const id = from + i;
    out.push({ type: 'phase.start', id, parentId: 1, name: 'Measuring tactic time', nbSteps: 2, instance: i });
    out.push({ type: 'phase.step', id, step: 0, stepsDone: 1 });
    out.push({ type: 'phase.finish', id, stepsDone: 2, early: false });
  }
  return out;
}

describe('event stream: resets instead of silent gaps', () => {
  it('resumes a Last-Event-ID older than the kept events with a reset, then the events after it', async () => {
    const id = await startBuild();
    fake.emit(id, [
      { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 3, instance: 0 },
      { type: 'phase.start', id: 2, parentId: 1, name: 'Timing tactics', nbSteps: 2, instance: 0 },
    ]);
    // The client saw this much, then lost its connection.
    const client = new Client(id);
    client.cursor.startEmpty();
    client.cursor.events(fake.builds.get(id)!.events);
    const lastSeen = client.cursor.lastSeq;
    // Meanwhile Timing tactics finished, with far more events than the service keeps.
    fake.emit(id, phases(100, RETAIN));
    fake.emit(id, [{ type: 'phase.finish', id: 2, stepsDone: 2, early: false }]);
    fake.emit(id, [{ type: 'phase.step', id: 1, step: 1, stepsDone: 2 }]);

    const sse = await openSse(eventsUrl(id), { ...auth, 'Last-Event-ID': String(lastSeen) });
    await sse.waitFor((m) => m.event === 'reset');
    fake.emit(id, [{ type: 'phase.finish', id: 1, stepsDone: 3, early: false }]);
    fake.finish(id, 'succeeded');
    await sse.ended;

    // Record, then the reset, before any event; the events continue the reset's seq.
    expect(sse.messages.slice(0, 2).map((m) => m.event)).toEqual(['snapshot', 'reset']);
    const [reset] = sse.resets();
    const events = sse.events();
    expect(events[0].seq).toBe(reset.seq + 1);
    expect(events.map((e) => e.type)).toEqual(['phase.finish', 'build.finished']);

    client.take(sse.messages);
    expect(client.resets).toBe(1);
    expect(client.view.snapshot()).toEqual(fake.getView(id));
    // The failure this guards against: a client fed the kept tail only keeps Timing tactics open forever.
    expect(client.view.rows.openCount).toBe(0);
    const timing = client.view.rows.byKey.get('\u001fBuilding engine\u001fTiming tactics')!;
    expect(timing.open).toEqual([]);
    expect(timing.shown.endT).toBeDefined();
    expect(client.view.rows.byKey.get('\u001fBuilding engine\u001fTiming tactics\u001fMeasuring tactic time')).toBeUndefined();
    expect(client.view.rows.byKey.get('\u001fBuilding engine\u001fMeasuring tactic time')!.count).toBe(RETAIN);
    expect(client.view.status).toBe('succeeded');
  });

  it('replays without a reset when the events after Last-Event-ID are all kept', async () => {
    const id = await startBuild();
    fake.emit(id, [{ type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 1, instance: 0 }]);
    const sse = await openSse(eventsUrl(id), { ...auth, 'Last-Event-ID': '0' });
    await sse.waitFor((m) => m.id === '1');
    fake.emit(id, [{ type: 'phase.finish', id: 1, stepsDone: 1, early: false }]);
    fake.finish(id, 'succeeded');
    await sse.ended;
    expect(sse.resets()).toEqual([]);
    expect(sse.events().map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('resets a slow client the service dropped, once it reads again, and it ends with the right view', async () => {
    const id = await startBuild();
    fake.emit(id, [{ type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 3, instance: 0 }]);
    const client = new Client(id);
    const messages: SseMessage[] = [];
    const parser = new SseParser((m) => messages.push(m));
    let response: http.IncomingMessage | undefined;
    const ended = new Promise<void>((done) => {
      const req = http.get(eventsUrl(id), { headers: { ...auth, Accept: 'text/event-stream' } }, (res) => {
        response = res;
        res.on('data', (c: Buffer) => parser.push(c));
        res.on('end', done);
        res.on('close', done);
      });
      req.on('error', () => done());
    });
    await expect.poll(() => messages.some((m) => m.event === 'reset')).toBe(true);
    response!.pause(); // the client stops reading
    const before = fake.subscriberCount;
    // Enough bytes to fill the socket buffers, so the server has to wait for the client; steps
    // and logs pile up behind it until it is more than MAX_BACKLOG events behind.
    const big = 'x'.repeat(512 * 1024);
    let next = 2;
    for (let i = 0; i < 64 && fake.subscriberCount >= before; i++) {
      fake.emit(id, [{ type: 'log', severity: 'verbose', message: big }, ...phases(next, 2)]);
      next += 2;
      await new Promise((r) => setImmediate(r));
    }
    expect(fake.subscriberCount).toBe(before - 1); // dropped
    fake.emit(id, phases(next, 3));
    next += 3;
    response!.resume(); // reads again: a reset, then the events after it
    await expect.poll(() => fake.subscriberCount, { timeout: 10_000 }).toBe(before);
    fake.emit(id, phases(next, 2));
    fake.emit(id, [{ type: 'phase.finish', id: 1, stepsDone: 3, early: false }]);
    fake.finish(id, 'succeeded');
    await ended;

    const kinds = messages.map((m) => m.event);
    const secondReset = kinds.indexOf('reset', kinds.indexOf('reset') + 1);
    expect(secondReset).toBeGreaterThan(1);
    // The reset after the drop is newer than anything the client got before it.
    const lastBefore = Math.max(
      ...messages
        .slice(0, secondReset)
        .filter((m) => m.event === 'message')
        .map((m) => Number(m.id)),
    );
    expect(Number(messages[secondReset].id)).toBeGreaterThan(lastBefore);
    client.take(messages);
    expect(client.resets).toBe(2);
    expect(client.view.snapshot()).toEqual(fake.getView(id));
    expect(client.view.rows.openCount).toBe(0);
    expect(client.view.status).toBe('succeeded');
  });

  it('cuts a client that reads nothing at all, so it holds no connection forever', async () => {
    const id = await startBuild();
    let closed = false;
    const watch = (r: http.IncomingMessage, res: http.ServerResponse) => {
      if (r.url?.includes(`/${id}/events`)) res.socket?.on('close', () => (closed = true));
    };
    server.server.on('request', watch);
    const req = http.get(eventsUrl(id), { headers: auth }, (res) => res.pause());
    req.on('error', () => undefined);
    const before = fake.subscriberCount;
    await expect.poll(() => fake.subscriberCount).toBe(before + 1);
    const big = 'x'.repeat(512 * 1024);
    for (let i = 0; i < 64 && !closed; i++) {
      fake.emit(id, [{ type: 'log', severity: 'verbose', message: big }]);
      await new Promise((r) => setImmediate(r));
    }
    await expect.poll(() => closed, { timeout: STALL_CUT_MS * 20 }).toBe(true);
    await expect.poll(() => fake.subscriberCount).toBe(before);
    server.server.off('request', watch);
    req.destroy();
    fake.finish(id, 'failed');
  });
});

describe('GET /api/builds/{id}/view', () => {
  it('answers the complete view, valid by its schema, equal to the service view', async () => {
    const id = await startBuild();
    fake.emit(id, [
      { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 3, instance: 0 },
      { type: 'phase.step', id: 1, step: 0, stepsDone: 1 },
    ]);
    const res = await fetch(`${base}/api/builds/${id}/view`, { headers: auth });
    expect(res.status).toBe(200);
    const view = BuildViewSnapshot.parse(await res.json());
    expect(view).toEqual(fake.getView(id));
    expect(BuildView.fromSnapshot(view).currentPath()).toEqual([{ name: 'Building engine', stepsDone: 1, nbSteps: 3 }]);
    fake.finish(id, 'failed');
    const missing = await fetch(`${base}/api/builds/nope/view`, { headers: auth });
    expect(missing.status).toBe(404);
    // The record no longer carries phases.
    const rec = (await (await fetch(`${base}/api/builds/${id}`, { headers: auth })).json()) as Record<string, unknown>;
    expect(rec).not.toHaveProperty('phases');
  });
});
