// `trt-build-studio farm status --queue redis://host:port [--json]`: what the build farm is doing,
// read from its Redis (the same view as GET /api/farm on a `serve --queue`).
import { parseArgs } from 'node:util';
import { UsageError } from '../shared/usage-error.js';

export const FARM_USAGE = `usage: trt-build-studio farm status --queue redis://host:port [--json]

  --queue URL   the farm's Redis
  --json        the status as one JSON object (the shape of GET /api/farm)

Shows the live workers (labels, busy slots, last heartbeat), each target's queued builds and why
each one waits, the running builds and the most recent endings.`;

export async function runFarm(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h') {
    process.stdout.write(`${FARM_USAGE}\n`);
    return 0;
  }
  if (sub !== 'status') throw new UsageError(`farm: expected "status", got ${sub === undefined ? 'nothing' : `"${sub}"`}\n${FARM_USAGE}`);
  const { values } = parseArgs({ args: rest, strict: true, allowPositionals: false, options: { queue: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
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
    const status = await readFarmStatus(new FarmStore(redis, DEFAULT_LIMITS));
    process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : `${formatFarmStatus(status)}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`trt-build-studio farm: ${(e as Error).message}\n`);
    return 1;
  } finally {
    redis.disconnect();
  }
}
