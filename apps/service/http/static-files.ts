// The web UI (dist/renderer) for browsers. Hashed assets are cached for good; everything else
// is revalidated so a rebuilt UI shows up on reload. The CSP keeps the page to its own origin.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import { ErrorResponse } from './errors.js';

export const CONTENT_SECURITY_POLICY = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

export function securityHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // The first page load carries ?token=; never leak it to another site.
    'Referrer-Policy': 'no-referrer',
  };
}

export async function serveStatic(req: http.IncomingMessage, res: http.ServerResponse, rootDir: string, pathname: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    throw new ErrorResponse('method_not_allowed', `${req.method} is not allowed here (GET or HEAD)`, { Allow: 'GET, HEAD' });
  }
  let rel: string;
  try {
    rel = decodeURIComponent(pathname).replace(/^\/+/, '');
  } catch {
    throw new ErrorResponse('bad_input', 'malformed URL encoding');
  }
  if (rel.includes('\0') || rel.split(/[\\/]+/).includes('..')) throw new ErrorResponse('not_found', 'not found');

  let root: string;
  try {
    root = await fs.promises.realpath(rootDir);
  } catch {
    throw new ErrorResponse('not_found', `the web UI is not built (${rootDir} is missing): run npm run build:renderer`);
  }
  const file = await resolveFile(root, rel === '' ? 'index.html' : rel);
  if (!file) throw new ErrorResponse('not_found', `not found: ${pathname}`);

  const ext = path.extname(file.path).toLowerCase();
  const etag = `W/"${file.stat.size.toString(16)}-${Math.floor(file.stat.mtimeMs).toString(16)}"`;
  const headers: Record<string, string | number> = {
    ...securityHeaders(),
    'Content-Type': MIME[ext] ?? 'application/octet-stream',
    // Vite names files under assets/ by content hash, so they can never change under that name.
    'Cache-Control': path.relative(root, file.path).startsWith(`assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    ETag: etag,
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  headers['Content-Length'] = file.stat.size;
  res.writeHead(200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = fs.createReadStream(file.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/**
 * The file under root for a URL path; a path with no extension that names nothing falls back to
 * index.html (client-side routes). Symlinks pointing out of root are refused.
 */
async function resolveFile(root: string, rel: string): Promise<{ path: string; stat: fs.Stats } | undefined> {
  const candidates = [path.join(root, rel)];
  if (!path.extname(rel)) candidates.push(path.join(root, rel, 'index.html'), path.join(root, 'index.html'));
  for (const candidate of candidates) {
    try {
      const real = await fs.promises.realpath(candidate);
      if (real !== root && !real.startsWith(root + path.sep)) continue;
      const stat = await fs.promises.stat(real);
      if (stat.isFile()) return { path: real, stat };
    } catch {
      // not there: try the next candidate
    }
  }
  return undefined;
}
