// Issue 40 items 5 and 7 at the HTTP layer: an error body's message shows the names it quotes
// with control characters and bidi overrides escaped and a long value cut with its length named
// (the JSON data fields keep exact values); a request whose headers are larger than Node's limit is
// answered 431 with a JSON body instead of a reset connection. In-process, against the fake service.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { FAKE_MAGIC, FakeBuildService } from './fake-service.js';

const TOKEN = 'test-token-0123456789';
let dir: string;
const servers: BuildHttpServer[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-http-hostile-'));
  fs.mkdirSync(path.join(dir, 'uploads'));
  fs.mkdirSync(path.join(dir, 'renderer'));
  fs.writeFileSync(path.join(dir, 'model.onnx'), `${FAKE_MAGIC} weights`);
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function start(): Promise<number> {
  const server = createHttpServer({ service: new FakeBuildService(dir), token: TOKEN, uploadDir: path.join(dir, 'uploads'), staticDir: path.join(dir, 'renderer') });
  servers.push(server);
  return server.listen(0, '127.0.0.1');
}

/** Every character a terminal acts on, generated rather than listed case by case. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
function hostileName(seed: number): string {
  const controls = ['\u001b]0;owned\u0007', '\u001b[2J', '\r', '\u202e', '\u0085', '\u2066', '\n'];
  return `model-${seed}-${controls.slice(seed % controls.length).join('x')}.onnx`;
}

describe('error messages are text for a person', () => {
  it('escapes control characters and bidi overrides in every error message, and cuts a long value naming its length', async () => {
    const port = await start();
    const auth = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
    for (let seed = 0; seed < 7; seed++) {
      const name = hostileName(seed);
      const r = await fetch(`http://127.0.0.1:${port}/api/builds/${encodeURIComponent(name)}`, { headers: auth });
      expect(r.status).toBe(404);
      const body = (await r.json()) as { error: { message: string } };
      expect(body.error.message).not.toMatch(UNSAFE);
      expect(body.error.message).toContain('model-');
    }
    const long = path.join(dir, 'a'.repeat(100_000));
    const r = await fetch(`http://127.0.0.1:${port}/api/builds`, { method: 'POST', headers: auth, body: JSON.stringify({ modelPath: long, options: { backend: 'simulated' } }) });
    expect(r.status).toBeGreaterThanOrEqual(400);
    const text = ((await r.json()) as { error: { message: string } }).error.message;
    expect(text.length).toBeLessThan(2000);
    expect(text).toMatch(/… \(\d{6} characters\)/);
  });
});

describe('oversized request headers', () => {
  it('answers 431 with a JSON error, not a reset, and keeps serving', async () => {
    const port = await start();
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let reset = false;
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => (reset = true));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    await new Promise<void>((r) => socket.once('connect', () => r()));
    // A header several times Node's default limit (16 KiB), as a huge token would be.
    socket.write(`GET /api/builds HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${'t'.repeat(200_000)}\r\n\r\n`);
    await closed;
    expect(received, `reset: ${reset}`).toMatch(/^HTTP\/1\.1 431 /);
    const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: 'too_large', message: expect.stringMatching(/headers exceed the limit of \d+ bytes/) });
    const ok = await fetch(`http://127.0.0.1:${port}/api/builds`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
  });
});
