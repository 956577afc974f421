// The renderer is served from app://studio/ rather than file://. A custom standard scheme gives
// the page a real origin (so 'self' in the CSP means exactly our files), lets us attach the CSP as
// a response header (session.webRequest does not see file:// responses), and lets IPC handlers
// recognise our frames by URL. Only files under dist/renderer are reachable.
import { promises as fs } from 'node:fs';
import path from 'node:path';

export const APP_SCHEME = 'app';
export const APP_HOST = 'studio';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`;

/**
 * No inline or remote scripts, no eval, no plugins, no framing, no network beyond our own origin.
 * Styles allow 'unsafe-inline' because React and the virtualized lists position rows with style
 * attributes; that cannot run code.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Must be passed to protocol.registerSchemesAsPrivileged before the app is ready. */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: { standard: true, secure: true, supportFetchAPI: true },
};

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

function securityHeaders(contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-cache',
  };
}

/** The handler for protocol.handle(APP_SCHEME, …): serves files of `rootDir` only. */
export function createAppProtocolHandler(rootDir: string): (request: Request) => Promise<Response> {
  const root = path.resolve(rootDir);
  return async (request) => {
    const text = (status: number, body: string) => new Response(body, { status, headers: securityHeaders('text/plain; charset=utf-8') });
    if (!isAppUrl(request.url)) return text(404, 'not found');
    if (request.method !== 'GET' && request.method !== 'HEAD') return text(405, 'method not allowed');
    let rel: string;
    try {
      rel = decodeURIComponent(new URL(request.url).pathname);
    } catch {
      return text(400, 'bad path');
    }
    if (rel.includes('\0')) return text(400, 'bad path');
    if (rel === '/' || rel === '') rel = '/index.html';
    const file = path.resolve(root, `.${rel}`);
    if (file !== root && !file.startsWith(root + path.sep)) return text(403, 'forbidden');
    try {
      const body = await fs.readFile(file);
      const type = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
      return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers: securityHeaders(type) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR' ? text(404, 'not found') : text(500, 'read error');
    }
  };
}
