// A distributed lock in Redis: SET NX PX with a random token, renewed while held, released only
// by its holder (compare-and-delete in Lua). It guards shared timing caches across machines in
// addition to the file lock the native layer takes, because advisory file locks over NFS depend
// on the server and mount options.
import * as crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { keys } from './keys.js';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

export interface HeldLock {
  readonly name: string;
  /** False once the lock expired under us (Redis lost it, or renewals failed). */
  readonly held: boolean;
  release(): Promise<void>;
}

export async function acquireLock(
  redis: Redis,
  name: string,
  opts: { ttlMs?: number; waitMs?: number; pollMs?: number; onWait?: () => void; signal?: AbortSignal } = {},
): Promise<HeldLock | undefined> {
  const ttl = opts.ttlMs ?? 30_000;
  const key = keys.lock(name);
  const token = crypto.randomBytes(16).toString('hex');
  const deadline = Date.now() + (opts.waitMs ?? 10 * 60_000);
  let waited = false;
  for (;;) {
    if ((await redis.set(key, token, 'PX', ttl, 'NX')) === 'OK') break;
    if (Date.now() >= deadline || opts.signal?.aborted) return undefined;
    if (!waited) opts.onWait?.();
    waited = true;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
  }
  let held = true;
  const timer = setInterval(
    () => {
      redis.eval(RENEW, 1, key, token, ttl).then(
        (ok) => {
          if (ok !== 1) held = false;
        },
        () => undefined,
      );
    },
    Math.max(50, Math.floor(ttl / 3)),
  );
  timer.unref();
  return {
    name,
    get held() {
      return held;
    },
    async release() {
      clearInterval(timer);
      held = false;
      await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    },
  };
}
