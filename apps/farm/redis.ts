// Redis connections for serve and workers. ioredis reconnects by itself; what we add is one
// clear line when Redis goes away and one when it is back, instead of a stack trace per retry.
import { Redis } from 'ioredis';

export type LogLine = (line: string) => void;

/** Longest wait between reconnect attempts: after an outage every process is back within this. */
export const RECONNECT_MAX_MS = 1000;

export function redisUrlOk(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--queue: "${url}" is not a URL (expected redis://host:port)`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`--queue: "${url}" must start with redis:// or rediss://`);
  return url;
}

/**
 * `maxRetriesPerRequest: null`: commands wait for the reconnect rather than failing after a few
 * tries (BullMQ requires it for its blocking connections, and a build's events must not be
 * dropped because Redis restarted).
 */
export function connectRedis(url: string, who: string, log: LogLine): Redis {
  const r = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(200 * times, RECONNECT_MAX_MS),
  });
  watchRedis(r, url, who, log);
  return r;
}

// A process holds several connections (commands, a blocking reader, BullMQ's own); they go down
// and come back together, so the lines are per process and name, not per connection.
const downConnections = new Map<string, Set<object>>();

export function watchRedis(r: { on(ev: string, cb: (...a: never[]) => void): unknown }, url: string, who: string, log: LogLine): void {
  const down = downConnections.get(who) ?? new Set<object>();
  downConnections.set(who, down);
  r.on('error', ((err: Error & { code?: string }) => {
    if (down.has(r)) return;
    if (down.size === 0) log(`${who}: Redis at ${safeUrl(url)} is unavailable (${err.code ?? err.message}); reconnecting…`);
    down.add(r);
  }) as never);
  r.on('ready', (() => {
    if (!down.delete(r)) return;
    if (down.size === 0) log(`${who}: Redis at ${safeUrl(url)} is back`);
  }) as never);
}

/** The URL without a password, for logs. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
