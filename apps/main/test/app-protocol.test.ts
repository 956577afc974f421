import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, createAppProtocolHandler, isAppUrl } from '../app-protocol.js';

describe('app:// protocol handler', () => {
  let root: string;
  let handler: (r: Request) => Promise<Response>;
  beforeAll(() => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'tbs-proto-'));
    root = path.join(base, 'renderer');
    mkdirSync(path.join(root, 'assets'), { recursive: true });
    writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(path.join(root, 'assets', 'app-1.js'), 'console.log(1)');
    // A secret next to (not inside) the served folder.
    writeFileSync(path.join(base, 'secret.txt'), 'secret');
    handler = createAppProtocolHandler(root);
  });

  const get = (url: string, method = 'GET') => handler(new Request(url, { method }));

  it('serves the page with the CSP and a correct type', async () => {
    for (const url of ['app://studio/', 'app://studio/index.html']) {
      const res = await get(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toContain('<title>x</title>');
    }
    const js = await get('app://studio/assets/app-1.js?v=2');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe('console.log(1)');
  });

  it('never serves a file outside the renderer folder', async () => {
    for (const url of ['app://studio/..%2fsecret.txt', 'app://studio/%2e%2e/secret.txt', 'app://studio/assets/..%2f..%2fsecret.txt', 'app://studio/%2e%2e%5csecret.txt']) {
      const res = await get(url);
      expect([403, 404], url).toContain(res.status);
      expect(await res.text()).not.toContain('secret');
    }
  });

  it('answers 404 for missing files, directories and other hosts; 400 for bad escapes', async () => {
    expect((await get('app://studio/nope.js')).status).toBe(404);
    expect((await get('app://studio/assets')).status).toBe(404);
    expect((await get('app://evil/index.html')).status).toBe(404);
    expect((await get('app://studio/%E0%A4%A')).status).toBe(400);
    expect((await get('app://studio/a%00b')).status).toBe(400);
  });

  it('refuses methods other than GET and HEAD', async () => {
    expect((await get('app://studio/index.html', 'POST')).status).toBe(405);
    const head = await get('app://studio/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('recognises only our origin as the app', () => {
    expect(isAppUrl('app://studio/index.html')).toBe(true);
    expect(isAppUrl('app://studio.evil/index.html')).toBe(false);
    expect(isAppUrl('https://studio/index.html')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });
});
