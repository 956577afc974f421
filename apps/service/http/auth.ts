// Who may talk to the server: a request must name an allowed Host (DNS rebinding defence: a
// hostile page whose domain re-resolves to 127.0.0.1 still sends its own name as Host), and every
// /api call must carry the token, as a Bearer header or the tbs_token cookie set by the UI link.
import * as crypto from 'node:crypto';
import * as net from 'node:net';
import type * as http from 'node:http';
import { ErrorResponse } from './errors.js';

export const TOKEN_COOKIE = 'tbs_token';

export function generateToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** Constant-time comparison; hashing first makes the lengths equal so length leaks nothing either. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      out.set(name, decodeURIComponent(value));
    } catch {
      out.set(name, value);
    }
  }
  return out;
}

export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Throws 401 unless the request carries the token (Bearer header first, then the cookie). */
export function requireToken(req: http.IncomingMessage, token: string): void {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m) throw new ErrorResponse('unauthorized', 'malformed Authorization header: expected "Bearer <token>"', authenticateHeader());
    if (!tokenMatches(m[1], token)) throw new ErrorResponse('unauthorized', 'wrong token', authenticateHeader());
    return;
  }
  const cookie = parseCookies(req.headers.cookie).get(TOKEN_COOKIE);
  if (cookie === undefined) {
    throw new ErrorResponse('unauthorized', 'missing token: send "Authorization: Bearer <token>" (the token is printed by `trt-build-studio serve`)', authenticateHeader());
  }
  if (!tokenMatches(cookie, token)) throw new ErrorResponse('unauthorized', 'wrong token (cookie)', authenticateHeader());
}

function authenticateHeader(): Record<string, string> {
  return { 'WWW-Authenticate': 'Bearer realm="trt-build-studio"' };
}

/** Splits a Host header into name and port; IPv6 literals keep their brackets off. */
export function parseHostHeader(host: string): { name: string; port: number | undefined } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
  if (!m) return undefined;
  const name = m[1].startsWith('[') ? m[1].slice(1, -1) : m[1];
  return { name: name.toLowerCase(), port: m[2] === undefined ? undefined : Number(m[2]) };
}

/**
 * Allowed: loopback names, any IP literal (a rebinding attack needs a domain name, so literals are
 * safe) and the host the server was told to bind to — each only with the server's own port.
 */
export function hostAllowed(hostHeader: string | undefined, port: number, boundHost: string): boolean {
  if (!hostHeader) return false;
  const h = parseHostHeader(hostHeader);
  if (!h) return false;
  if ((h.port ?? 80) !== port) return false;
  if (h.name === 'localhost' || net.isIP(h.name) !== 0) return true;
  return h.name === boundHost.toLowerCase();
}

/**
 * RFC 9112 §3.2: a request with more than one Host field must get a 400. Node joins nothing here
 * (it keeps the first), so the raw header list is where a second one shows.
 */
export function checkSingleHost(req: http.IncomingMessage): void {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') count++;
  if (count > 1) throw new ErrorResponse('bad_input', `${count} Host headers in one request: send exactly one`, { Connection: 'close' });
}

export function checkHost(req: http.IncomingMessage, port: number, boundHost: string): void {
  if (!hostAllowed(req.headers.host, port, boundHost)) {
    throw new ErrorResponse('forbidden', `Host "${req.headers.host ?? ''}" is not allowed (use http://127.0.0.1:${port}/)`);
  }
}

/**
 * A cross-site page may make a browser send requests here; with SameSite=Strict the cookie stays
 * home, and this refuses any request whose Origin names another site outright.
 */
export function checkOrigin(req: http.IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw new ErrorResponse('forbidden', `malformed Origin "${origin}"`);
  }
  if (originHost.toLowerCase() !== (req.headers.host ?? '').toLowerCase()) {
    throw new ErrorResponse('forbidden', `cross-origin request from ${origin} refused`);
  }
}
