// `trt-build-studio farm status --queue redis://host:port [--json]`: what the build farm is doing,
// read from its Redis (the same view as GET /api/farm on a `serve --queue`).
import { parseArgs } from 'node:util';
import { UsageError } from '../shared/usage-error.js';

export const FARM_USAGE = `usage: trt-build-studio farm status --queue redis://host:port [--json] [--watch]

  --queue URL   the farm's Redis
  --json        the status as one JSON object (the shape of GET /api/farm)
  --watch       keep following: the status again at every change (with --json one object per
                line), until Ctrl-C

Shows the live workers (labels, busy slots, last heartbeat), each target's queued builds and why
each one waits, the running builds and the most recent endings.`;

export async function runFarm(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h') {
    process.stdout.write(`${FARM_USAGE}\n`);
    return 0;
  }
  if (sub !== 'status') throw new UsageError(`farm: expected "status", got ${sub === undefined ? 'nothing' : `"${sub}"`}\n${FARM_USAGE}`);
  const { values } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: false,
    options: { queue: { type: 'string' }, json: { type: 'boolean' }, watch: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${FARM_USAGE}\n`);
    return 0;
  }
  if (!values.queue) throw new UsageError(`farm status: --queue redis://host:port is required\n${FARM_USAGE}`);
  const { connectRedis, redisUrlOk, safeUrl } = await import('./redis.js');
  let url: string;
  try {
    url = redisUrlOk(values.queue);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { FarmStore, DEFAULT_LIMITS } = await import('./farm-store.js');
  const { readFarmStatus, formatFarmStatus } = await import('./farm-status.js');
  // One try, not ioredis's endless reconnecting: a status command answers or says why not.
  const redis = connectRedis(url, 'trt-build-studio farm', () => undefined);
  try {
    await Promise.race([
      new Promise<void>((resolve, reject) => {
        redis.once('ready', () => resolve());
        redis.once('error', (e: Error & { code?: string }) => reject(new Error(`Redis at ${safeUrl(url)} is unavailable (${e.code ?? e.message})`)));
      }),
      new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`Redis at ${safeUrl(url)} did not answer within 5 s`)), 5000).unref()),
    ]);
    const store = new FarmStore(redis, DEFAULT_LIMITS);
    if (values.watch) return await watchFarm(url, store, values.json === true);
    const status = await readFarmStatus(store);
    process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : `${formatFarmStatus(status)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`trt-build-studio farm: ${(e as Error).message}\n`);
    return 1;
  } finally {
    redis.disconnect();
  }
}

/**
 * `farm status --watch`: the status at once and again whenever the farm says something changed
 * (workers publish each heartbeat and their leaving on keys.farmChannel, serve publishes new jobs
 * on keys.queuedChannel and the builds it ends itself on keys.farmChannel), and when the first
 * live worker's heartbeat would expire (a dead worker says nothing). Nothing is read on a timer.
 * Runs until a signal: Ctrl-C ends it as it ends every command with no builds to stop (exit 130).
 */
async function watchFarm(url: string, store: import('./farm-store.js').FarmStore, json: boolean): Promise<number> {
  const { readFarmStatus, formatFarmStatus } = await import('./farm-status.js');
  const { FarmStatusFeed } = await import('./farm-status-feed.js');
  const { keys } = await import('./keys.js');
  const { watchRedis } = await import('./redis.js');
  let expiry: NodeJS.Timeout | undefined;
  // A Redis that goes away while watching is said in one line (and when it is back), not a stack.
  const feed: InstanceType<typeof FarmStatusFeed> = new FarmStatusFeed(async () => {
    const status = await readFarmStatus(store);
    const deadlines = (await store.liveWorkers()).flatMap((w) => (typeof w.beatAt === 'number' && typeof w.ttlMs === 'number' ? [w.beatAt + w.ttlMs] : []));
    if (expiry) clearTimeout(expiry);
    if (deadlines.length) expiry = setTimeout(() => feed.changed(), Math.max(0, Math.min(...deadlines) - Date.now()) + 50);
    return status;
  }, 500);
  const changes = store.redis.duplicate();
  watchRedis(changes, url, 'trt-build-studio farm', (l) => process.stderr.write(`${l}\n`));
  changes.on('message', () => feed.changed());
  changes.on('ready', () => {
    void changes.subscribe(keys.farmChannel, keys.queuedChannel, keys.stopChannel).catch(() => undefined);
    feed.changed();
  });
  const tty = process.stdout.isTTY === true && !json;
  feed.subscribe((s) => {
    if (json) process.stdout.write(`${JSON.stringify(s)}\n`);
    else process.stdout.write(`${tty ? '\x1b[H\x1b[2J' : '\n'}${formatFarmStatus(s)}\n`);
  });
  return new Promise<number>(() => undefined);
}
