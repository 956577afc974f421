// Hostile clients at the connection level, in-process against the in-memory service: duplicate
// Host headers, bodies sent too slowly, headers never finished, more connections than the cap.
// Every server here is started with short limits so the cases take seconds, not minutes.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type BuildHttpServer, type HttpServerOptions } from '../server.js';
import { FAKE_MAGIC, FakeBuildService } from './fake-service.js';

const TOKEN = 'test-token-0123456789';

let dir: string;
let uploadDir: string;
let model: string;
const servers: BuildHttpServer[] = [];
const sockets: net.Socket[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-http-hard-'));
  uploadDir = path.join(dir, 'uploads');
  fs.mkdirSync(uploadDir);
  fs.mkdirSync(path.join(dir, 'renderer'));
  model = path.join(dir, 'model.onnx');
  fs.writeFileSync(model, `${FAKE_MAGIC} weights`);
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let fake: FakeBuildService;

async function start(opts: Partial<HttpServerOptions> = {}): Promise<number> {
  fake = new FakeBuildService(dir);
  const server = createHttpServer({
    service: fake,
    token: TOKEN,
    uploadDir,
    staticDir: path.join(dir, 'renderer'),
    heartbeatMs: 50,
    ...opts,
  });
  servers.push(server);
  return server.listen(0, '127.0.0.1');
}

interface RawConn {
  socket: net.Socket;
  /** Everything received so far. */
  text(): string;
  /** Resolves when the server closes the connection, with the time it took from `since`. */
  closed: Promise<number>;
}

function connect(port: number): Promise<RawConn> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    const opened = Date.now();
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - opened)));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, text: () => received, closed }));
    socket.once('error', reject);
  });
}

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
}

function bodyOf(raw: string): { error?: { code: string; message: string } } {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('duplicate Host', () => {
  it('answers 400 to two Host headers, even when both name this server', async () => {
    const port = await start();
    for (const second of [`127.0.0.1:${port}`, `evil.example:${port}`]) {
      const c = await connect(port);
      c.socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: ${second}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
      await c.closed;
      expect(statusOf(c.text()), c.text()).toBe(400);
      expect(bodyOf(c.text()).error).toMatchObject({ code: 'bad_input', message: expect.stringMatching(/Host/) });
    }
    // One Host still works.
    const ok = await fetch(`http://127.0.0.1:${port}/api/builds`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
  });
});

describe('request body timeout', () => {
  it('cuts a client that sends its body too slowly with 408 and closes the socket', async () => {
    const port = await start({ requestBodyTimeoutMs: 400 });
    const c = await connect(port);
    const body = JSON.stringify({ modelPath: model, options: { backend: 'simulated' } });
    c.socket.write(
      `POST /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` + `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // One byte every 100 ms: never idle long, but far below any sane rate.
    let i = 0;
    const drip = setInterval(() => {
      if (i < body.length && !c.socket.destroyed) c.socket.write(body[i++]);
    }, 100);
    try {
      const took = await c.closed;
      expect(statusOf(c.text()), c.text()).toBe(408);
      expect(bodyOf(c.text()).error).toMatchObject({ code: 'timeout', message: expect.stringMatching(/body/) });
      expect(c.text()).toMatch(/\r\nConnection: close\r\n/i);
      expect(took).toBeGreaterThanOrEqual(350);
      expect(took).toBeLessThan(5000);
      expect(i).toBeLessThan(body.length);
    } finally {
      clearInterval(drip);
    }
  });

  it('cuts a client that stops sending mid-body (multipart upload) and leaves no partial file', async () => {
    const port = await start({ requestBodyTimeoutMs: 300 });
    const c = await connect(port);
    const boundary = 'XBOUNDARYX';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"; filename="m.onnx"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    c.socket.write(
      `POST /api/models HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n${head}${FAKE_MAGIC}`,
    );
    await c.closed;
    expect(statusOf(c.text()), c.text()).toBe(408);
    // The partial file goes as the upload sees its connection close.
    await waitUntil(() => fs.readdirSync(uploadDir).length === 0);
  });

  it('lets a body that keeps arriving fast finish even when it takes longer than the timeout', async () => {
    const port = await start({ requestBodyTimeoutMs: 1000, minBodyBytesPerSecond: 200 });
    const c = await connect(port);
    const body = JSON.stringify({ modelPath: model, options: { backend: 'simulated' }, pad: 'x'.repeat(1800) });
    c.socket.write(
      `POST /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    // ~2 KB in 200-byte chunks every 150 ms, ~1.5 s: well above the 200 B/s floor, longer than the
    // 1 s timeout, and no pause near 1 s even on a busy machine.
    const t0 = Date.now();
    for (let off = 0; off < body.length; off += 200) {
      c.socket.write(body.slice(off, off + 200));
      await new Promise((r) => setTimeout(r, 150));
    }
    await c.closed;
    expect(Date.now() - t0).toBeGreaterThan(1000);
    // The body arrived whole: the route answered it (400 names the unknown field), not the timer.
    expect(statusOf(c.text()), c.text()).toBe(400);
    expect(bodyOf(c.text()).error?.message).toMatch(/pad/);
  });
});

describe('header timeout and idle keep-alive', () => {
  it('closes a connection whose headers never finish', async () => {
    const port = await start({ headersTimeoutMs: 500 });
    const c = await connect(port);
    c.socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const took = await c.closed;
    expect(statusOf(c.text()), c.text()).toBe(408);
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(5000);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const port = await start({ keepAliveTimeoutMs: 300 });
    const c = await connect(port);
    c.socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    const took = await c.closed;
    expect(statusOf(c.text())).toBe(200);
    expect(took).toBeLessThan(3000);
  });
});

describe('connection cap', () => {
  it('answers 503 on connections beyond the cap (an event stream holds one) and serves again once they close', async () => {
    const port = await start({ maxConnections: 3 });
    const { id } = await fake.startBuild({ modelPath: model });
    const held: RawConn[] = [];
    for (let i = 0; i < 3; i++) held.push(await connect(port));
    held[2].socket.write(`GET /api/builds/${id}/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await waitUntil(() => held[2].text().includes('event: snapshot'));
    const over = await connect(port);
    over.socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await over.closed;
    expect(statusOf(over.text()), over.text()).toBe(503);
    expect(bodyOf(over.text()).error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/3 connections/) });
    expect(over.text()).toMatch(/\r\nRetry-After: \d+\r\n/i);

    // The held ones are served.
    held[0].socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await waitUntil(() => held[0].text().includes('\r\n\r\n'));
    expect(statusOf(held[0].text())).toBe(200);

    // The stream still runs; once every held connection is gone, new ones are served again.
    expect(held[2].socket.destroyed).toBe(false);
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    await new Promise((r) => setTimeout(r, 50));
    const again = await fetch(`http://127.0.0.1:${port}/api/builds`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(again.status).toBe(200);
  });
});

describe('connection flood', () => {
  it('past the cap and the 64 answered beyond it, closes new connections at accept without reading them', async () => {
    const port = await start({ maxConnections: 2 });
    const held: RawConn[] = [];
    for (let i = 0; i < 2 + 64; i++) held.push(await connect(port));
    const dropped = await connect(port);
    const took = await dropped.closed;
    expect(dropped.text()).toBe('');
    expect(took).toBeLessThan(3000);
    // The ones within the cap and the overflow are still open: the overflow is answered with a 503.
    const last = held.at(-1)!;
    last.socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await last.closed;
    expect(statusOf(last.text())).toBe(503);
  });
});

async function waitUntil(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
