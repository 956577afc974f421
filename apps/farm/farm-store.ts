// The farm's state in Redis, and the only code that writes it. Two rules keep it consistent when
// serve and workers write concurrently, reconnect, or a presumed-dead worker comes back:
//  - events of a build are numbered by one Redis counter (a Lua script appends and numbers them
//    atomically), and nothing is appended after build.finished;
//  - a writer that owns a build passes its owner token; once the owner changed (serve declared
//    the worker lost, or cancelled the build while it was queued), the old owner's writes are
//    refused, and a final state is never overwritten.
import type { Redis, Result } from 'ioredis';
import type { BuildEvent, BuildRecord, BuildState, CancelReason } from '../shared/protocol.js';
import type { ZodType } from 'zod';
import { CancelReason as CancelReasonSchema } from '../shared/protocol.js';
import { FarmEngineIdentity, FarmRecordSchema, FarmRequestSchema, parseStored, parseStreamEntry, WorkerInfoSchema } from './farm-schemas.js';
import type { StartBuildInput } from '../service/api.js';
import { keys } from './keys.js';
import type { Labels } from './labels.js';
import type { BuildViewSnapshot } from '../shared/build-view.js';

export const FINAL_STATES: ReadonlySet<BuildState> = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);

/** What a queued build carries to its worker. */
export interface FarmRequest {
  input: StartBuildInput;
  target: Labels;
  /** Extra attempts after a lost worker (0: a lost worker ends the build "crashed"). */
  retries: number;
}

/** The farm's own facts about a build, returned beside the BuildRecord (as `farm`). */
export interface FarmInfo {
  target: Labels;
  worker?: { id: string; labels: Labels };
  /** Why a queued build is not running yet (no live worker matches its target). */
  waiting?: string;
  attempt: number;
  retries: number;
  /** The engine the worker wrote (in the artifact folder), as it saw it: serve serves only that file. */
  engine?: FarmEngineIdentity;
}

/**
 * A build as Redis keeps it: the record, the farm's facts, and the build view of what went into
 * its event stream (rewritten now and then by the worker; the stream carries everything between).
 */
export type FarmRecord = BuildRecord & { farm: FarmInfo; view?: BuildViewSnapshot };

export interface WorkerInfo {
  id: string;
  labels: Labels;
  concurrency: number;
  running: string[];
  host: string;
  pid: number;
  backends?: unknown;
  /** When this heartbeat was written (ms since the epoch; absent from older workers). */
  beatAt?: number;
  /** How long this heartbeat lives (the worker's --heartbeat-ms; absent from older workers). */
  ttlMs?: number;
}

// Entry ids are explicit (\`0-<seq+1>\`), and XADD refuses an id at or below the stream's last one:
// an entry someone else added (an automatic id is \`<ms>-<n>\`, far above ours) would refuse every
// later append, and the build would never end. So when XADD refuses, the stream is rebuilt in the
// same script: the farm's own entries before this one are kept, the foreign ones dropped (a key
// that is not a stream at all is replaced), and the append goes in. Returns {first seq, number of
// rebuilds}; the caller logs a rebuild with the key.
const APPEND = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {-1, 0} end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[4], 'owner') ~= ARGV[1] then return {-2, 0} end
local cap = redis.call('HGET', KEYS[4], 'maxEvents') or ARGV[2]
local first = -1
local rebuilt = 0
for i = 3, #ARGV, 2 do
  local s = redis.call('INCR', KEYS[1]) - 1
  if first < 0 then first = s end
  local id = '0-' .. (s + 1)
  local body = '{"seq":' .. s .. ',' .. string.sub(ARGV[i + 1], 2)
  local r = redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', cap, id, 'e', body)
  if type(r) == 'table' and r.err then
    local kept = redis.pcall('XRANGE', KEYS[2], '-', '(' .. id)
    redis.call('DEL', KEYS[2])
    if type(kept) == 'table' and not kept.err then
      for _, e in ipairs(kept) do
        if string.match(e[1], '^0%-%d+$') then redis.call('XADD', KEYS[2], e[1], unpack(e[2])) end
      end
    end
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', cap, id, 'e', body)
    rebuilt = rebuilt + 1
  end
  if ARGV[i] == '1' then redis.call('SET', KEYS[3], '1') break end
end
return {first, rebuilt}`;

const FINAL_LUA = `(s == 'succeeded' or s == 'cancelled' or s == 'failed' or s == 'crashed')`;

const PUT_RECORD = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s or ${FINAL_LUA} then return 0 end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'record', ARGV[3])
return 1`;

/** Takes a queued build (worker start, or serve cancelling it before any worker did). */
const CLAIM = `
if redis.call('HGET', KEYS[1], 'state') ~= 'queued' then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'attempts', 1)`;

/** Takes a running build away from an owner that is gone (only if it still is that owner). */
const TAKEOVER = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s or ${FINAL_LUA} then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2])
return 1`;

/**
 * A worker that shuts down gives a build back (only while it still owns it and it has not ended):
 * a build a person stopped (KEYS[2]'s count) is not given back, it ends cancelled (3); with an
 * attempt left (ARGV[2] '1') it is queued again, ownerless, with the record ARGV[3] (1); without
 * one the worker keeps it to end it (2). 0: not this owner's any more (serve took it over).
 */
const HAND_BACK = `
local s = redis.call('HGET', KEYS[1], 'state')
if not s or ${FINAL_LUA} then return 0 end
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[2], 'n') or '0') > 0 then return 3 end
if ARGV[2] ~= '1' then return 2 end
redis.call('HSET', KEYS[1], 'state', 'queued', 'owner', '', 'record', ARGV[3])
return 1`;

/**
 * Stop, in one round trip: a build still queued is claimed by `owner` (ARGV[1]) and the script
 * returns 0 (the caller ends it); otherwise the Stop is counted and published, for current workers
 * with the count and reason ({"id", "n", "reason"} on the stop channel: they act on it without
 * reading the counter), and as the bare id on the cancel channel for workers of earlier versions,
 * which read the counter then. Returns the count.
 */
const REQUEST_STOP = `
if redis.call('HGET', KEYS[1], 'state') == 'queued' then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', 'cancelling')
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  return 0
end
local n = redis.call('HINCRBY', KEYS[2], 'n', 1)
redis.call('HSET', KEYS[2], 'reason', ARGV[2])
redis.call('PUBLISH', ARGV[4], cjson.encode({id = ARGV[3], n = n, reason = ARGV[2]}))
redis.call('PUBLISH', ARGV[5], ARGV[3])
return n`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    tbsAppend(...args: (string | number)[]): Result<[number, number], Context>;
    tbsPutRecord(key: string, owner: string, state: string, record: string): Result<number, Context>;
    tbsClaim(key: string, owner: string, state: string): Result<number, Context>;
    tbsTakeover(key: string, expectedOwner: string, newOwner: string): Result<number, Context>;
    tbsHandBack(buildKey: string, cancelKey: string, owner: string, requeue: string, record: string): Result<number, Context>;
    tbsRequestStop(buildKey: string, cancelKey: string, owner: string, reason: string, id: string, stopChannel: string, cancelChannel: string): Result<number, Context>;
  }
}

export function defineFarmCommands(r: Redis): void {
  r.defineCommand('tbsAppend', { numberOfKeys: 4, lua: APPEND });
  r.defineCommand('tbsPutRecord', { numberOfKeys: 1, lua: PUT_RECORD });
  r.defineCommand('tbsClaim', { numberOfKeys: 1, lua: CLAIM });
  r.defineCommand('tbsTakeover', { numberOfKeys: 1, lua: TAKEOVER });
  r.defineCommand('tbsHandBack', { numberOfKeys: 2, lua: HAND_BACK });
  r.defineCommand('tbsRequestStop', { numberOfKeys: 2, lua: REQUEST_STOP });
}

// serve's limits (`serve --farm-events-per-build`, `--farm-history`). The event cap travels with
// each build (its hash's maxEvents, written when serve creates it), so the workers that append
// need no setting of their own and never disagree with serve; a build created by an older serve
// has none and gets the appending worker's default.
export interface StoreLimits {
  /** Events kept per build in its stream (approximate, Redis trims in whole nodes). */
  streamMaxLen: number;
  /** Builds kept in the history; the oldest finished ones go first. */
  historyMax: number;
}

export const DEFAULT_LIMITS: StoreLimits = { streamMaxLen: 20_000, historyMax: 1000 };

export class FarmStore {
  /** Keys already reported as refused (each is said once per process, not at every read). */
  private readonly reported = new Set<string>();

  constructor(
    readonly redis: Redis,
    readonly limits: StoreLimits = DEFAULT_LIMITS,
    /** Where a value refused from Redis is reported, with its key (default: stderr). */
    private readonly log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  ) {
    defineFarmCommands(redis);
  }

  /** Reports a value from Redis that failed its check and is skipped: once per key and reason. */
  refused(key: string, why: string): void {
    const line = `trt-build-studio farm: skipping ${JSON.stringify(key).slice(0, 200)}: ${why}`;
    if (this.reported.has(line)) return;
    if (this.reported.size > 10_000) this.reported.clear();
    this.reported.add(line);
    this.log(line);
  }

  private checked<T>(key: string, schema: ZodType, raw: string | null): T | undefined {
    if (raw === null) return undefined;
    const r = parseStored<T>(schema, raw);
    if (r.ok) return r.value;
    this.refused(key, r.why);
    return undefined;
  }

  /** A build's stream entries as events, the ones that are not this build's own skipped (and said). */
  parseEntries(id: string, entries: Array<[string, string[]]>): BuildEvent[] {
    const out: BuildEvent[] = [];
    for (const [entryId, fields] of entries) {
      const r = parseStreamEntry(id, entryId, fields);
      if (r.ok) out.push(r.event);
      else this.refused(`${keys.events(id)} ${entryId}`, r.why);
    }
    return out;
  }

  async nextBuildId(): Promise<string> {
    const n = await this.redis.incr(keys.idCounter);
    return `f${n}-${Math.random().toString(16).slice(2, 8)}`;
  }

  async createBuild(record: FarmRecord, request: FarmRequest): Promise<void> {
    const id = record.id;
    await this.redis
      .multi()
      .hset(keys.build(id), {
        state: record.state,
        record: JSON.stringify(record),
        request: JSON.stringify(request),
        owner: '',
        attempts: '0',
        maxEvents: String(this.limits.streamMaxLen),
      })
      .zadd(keys.history, Date.now(), id)
      .exec();
    await this.trimHistory();
  }

  /** Drops the oldest finished builds beyond the limit, with their events. */
  private async trimHistory(): Promise<void> {
    const n = await this.redis.zcard(keys.history);
    const excess = n - this.limits.historyMax;
    if (excess <= 0) return;
    const oldest = await this.redis.zrange(keys.history, '0', String(excess * 2 + 10));
    let dropped = 0;
    for (const id of oldest) {
      if (dropped >= excess) break;
      const state = (await this.redis.hget(keys.build(id), 'state')) as BuildState | null;
      if (state && !FINAL_STATES.has(state)) continue;
      await this.redis.multi().zrem(keys.history, id).del(keys.build(id), keys.events(id), keys.seq(id), keys.final(id), keys.cancel(id)).exec();
      dropped++;
    }
  }

  async historyIds(): Promise<string[]> {
    return this.redis.zrange(keys.history, '0', '-1');
  }

  async getRecord(id: string): Promise<FarmRecord | undefined> {
    const rec = this.checked<FarmRecord>(`${keys.build(id)} record`, FarmRecordSchema, await this.field(id, 'record'));
    if (rec && rec.id !== id) {
      this.refused(`${keys.build(id)} record`, `the record is build ${JSON.stringify(rec.id).slice(0, 80)}'s`);
      return undefined;
    }
    return rec;
  }

  async getBuildFields(id: string): Promise<Record<string, string>> {
    return this.redis.hgetall(keys.build(id)).catch((e: Error) => {
      if (!/WRONGTYPE/.test(e.message)) throw e;
      this.refused(keys.build(id), 'not a hash');
      return {};
    });
  }

  /** One field of a build's hash; a key of another type (not the farm's) reads as absent, and is said. */
  private async field(id: string, name: string): Promise<string | null> {
    try {
      return await this.redis.hget(keys.build(id), name);
    } catch (e) {
      if (!/WRONGTYPE/.test((e as Error).message)) throw e;
      this.refused(keys.build(id), 'not a hash');
      return null;
    }
  }

  async getRequest(id: string): Promise<FarmRequest | undefined> {
    return this.checked<FarmRequest>(`${keys.build(id)} request`, FarmRequestSchema, await this.field(id, 'request'));
  }

  /**
   * Appends events (their seq is replaced by the farm's numbering) and returns them as stored,
   * or undefined when refused: the build already finished, or `owner` no longer owns it.
   */
  async append(id: string, events: BuildEvent[], owner: string): Promise<BuildEvent[] | undefined> {
    if (events.length === 0) return [];
    const args: (string | number)[] = [keys.seq(id), keys.events(id), keys.final(id), keys.build(id), owner, this.limits.streamMaxLen];
    let last = events.length;
    for (let i = 0; i < events.length; i++) {
      const { seq: _seq, ...body } = events[i];
      const isFinal = events[i].type === 'build.finished';
      args.push(isFinal ? '1' : '0', JSON.stringify(body));
      if (isFinal) {
        last = i + 1;
        break;
      }
    }
    const [first, rebuilt] = await this.redis.tbsAppend(...args);
    if (rebuilt > 0) this.refused(keys.events(id), 'entries the farm did not write blocked its appends; the stream was rebuilt without them');
    if (first < 0) return undefined;
    return events.slice(0, last).map((e, i) => ({ ...e, seq: first + i }) as BuildEvent);
  }

  /** Events with seq > afterSeq still kept in the stream, in order (at most `count`). */
  async eventsAfter(id: string, afterSeq: number, count = 5000): Promise<BuildEvent[]> {
    const entries = await this.redis.xrange(keys.events(id), `(0-${afterSeq + 1}`, '+', 'COUNT', count);
    return this.parseEntries(id, entries);
  }

  /** Records the engine the owner's build wrote (field \`engine\` of the build's hash). */
  async setEngine(id: string, engine: FarmEngineIdentity, owner: string): Promise<void> {
    await this.redis.eval(
      `if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('HSET', KEYS[1], 'engine', ARGV[2]) end`,
      1,
      keys.build(id),
      owner,
      JSON.stringify(engine),
    );
  }

  /** The engine identity a worker recorded for the build, when there is a valid one. */
  async getEngine(id: string): Promise<FarmEngineIdentity | undefined> {
    return this.checked<FarmEngineIdentity>(`${keys.build(id)} engine`, FarmEngineIdentity, await this.field(id, 'engine'));
  }

  async putRecord(record: FarmRecord, owner: string): Promise<boolean> {
    return (await this.redis.tbsPutRecord(keys.build(record.id), owner, record.state, JSON.stringify(record))) === 1;
  }

  /** Returns the attempt number (1, 2, ...) when the build was queued and is now `owner`'s, else 0. */
  async claim(id: string, owner: string, state: BuildState = 'running'): Promise<number> {
    return this.redis.tbsClaim(keys.build(id), owner, state);
  }

  async takeover(id: string, expectedOwner: string, newOwner: string): Promise<boolean> {
    return (await this.redis.tbsTakeover(keys.build(id), expectedOwner, newOwner)) === 1;
  }

  /** Back to the queue for another attempt (after takeover from a lost worker; a worker shutting down uses handBack). */
  async requeue(id: string, owner: string): Promise<void> {
    await this.redis.eval(`if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('HSET', KEYS[1], 'state', 'queued', 'owner', '') end`, 1, keys.build(id), owner);
  }

  /**
   * A shutting-down worker (`owner`) gives the build back: 'requeued' (queued again, ownerless,
   * `record` its snapshot; the caller adds the next attempt's job) when `requeue`, 'last' when not
   * (still the caller's, to end it), 'stopped' when a person asked to stop it (the caller ends it
   * cancelled), 'lost' when it is no longer the caller's.
   */
  async handBack(id: string, owner: string, requeue: FarmRecord | undefined): Promise<'requeued' | 'last' | 'stopped' | 'lost'> {
    const r = await this.redis.tbsHandBack(keys.build(id), keys.cancel(id), owner, requeue ? '1' : '0', requeue ? JSON.stringify(requeue) : '');
    return r === 1 ? 'requeued' : r === 2 ? 'last' : r === 3 ? 'stopped' : 'lost';
  }

  /**
   * Stop in one round trip: 0 when the build was still queued and is now `owner`'s to end (the
   * claim of `claim(id, owner, 'cancelling')`), else the number of Stops counted for it, the
   * worker running it told at once (see REQUEST_STOP).
   */
  async requestStop(id: string, owner: string, reason: CancelReason): Promise<number> {
    return this.redis.tbsRequestStop(keys.build(id), keys.cancel(id), owner, reason, id, keys.stopChannel, keys.cancelChannel);
  }

  async cancelRequests(id: string): Promise<{ n: number; reason: CancelReason }> {
    const h = await this.redis.hgetall(keys.cancel(id));
    const n = Number(h.n ?? 0);
    const reason = CancelReasonSchema.safeParse(h.reason ?? 'user');
    if (!Number.isSafeInteger(n) || n < 0 || !reason.success) this.refused(keys.cancel(id), `not a stop count and reason (${JSON.stringify(h).slice(0, 120)})`);
    // Unreadable still means somebody asked to stop: the build is stopped, as asked by a person.
    return { n: Number.isSafeInteger(n) && n >= 0 ? n : 1, reason: reason.success ? reason.data : 'user' };
  }

  async heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    await this.redis.multi().set(keys.worker(info.id), JSON.stringify(info), 'PX', ttlMs).sadd(keys.workers, info.id).publish(keys.farmChannel, info.id).exec();
  }

  async removeWorker(id: string): Promise<void> {
    await this.redis.multi().del(keys.worker(id)).srem(keys.workers, id).publish(keys.farmChannel, id).exec();
  }

  /** Workers whose heartbeat has not expired; forgets the dead ones. */
  async liveWorkers(): Promise<WorkerInfo[]> {
    const ids = await this.redis.smembers(keys.workers);
    if (ids.length === 0) return [];
    const vals = await this.redis.mget(ids.map((i) => keys.worker(i)));
    const live: WorkerInfo[] = [];
    const dead: string[] = [];
    vals.forEach((v, i) => {
      if (v === null) return dead.push(ids[i]);
      // A heartbeat that fails its check is not a worker this serve can show or send work to.
      const w = this.checked<WorkerInfo>(keys.worker(ids[i]), WorkerInfoSchema, v);
      if (w) live.push(w);
    });
    if (dead.length) await this.redis.srem(keys.workers, ...dead);
    return live;
  }

  async isWorkerAlive(id: string): Promise<boolean> {
    return (await this.redis.exists(keys.worker(id))) === 1;
  }

  /**
   * Whether worker `id` is alive *and still runs* build `buildId`: a worker restarted under the
   * same id (a pod restart with --id) beats again at once, but its new process does not run what
   * the old one did. 'gone' when no heartbeat is left, 'restarted' when the live one does not list
   * the build. (Workers list their running builds in every heartbeat, and beat before they claim.)
   */
  async workerRuns(id: string, buildId: string): Promise<'yes' | 'gone' | 'restarted'> {
    const raw = await this.redis.get(keys.worker(id));
    if (raw === null) return 'gone';
    try {
      const running = (JSON.parse(raw) as Partial<WorkerInfo>).running;
      return !Array.isArray(running) || running.includes(buildId) ? 'yes' : 'restarted';
    } catch {
      return 'yes';
    }
  }

  /**
   * Records pool `queueName` and its target. Where the pools hash should be, something else (not a
   * hash) is nothing of the farm's: it is said once and replaced, so that builds can be queued again.
   */
  async registerPool(queueName: string, canonical: string): Promise<void> {
    try {
      await this.redis.hset(keys.pools, queueName, canonical);
    } catch (e) {
      if (!/WRONGTYPE/.test((e as Error).message)) throw e;
      this.refused(keys.pools, 'not a hash of pools; replaced by one');
      await this.redis.multi().del(keys.pools).hset(keys.pools, queueName, canonical).exec();
    }
  }

  /** The pools (queue name → canonical target); none, said once, when the key holds something else. */
  async pools(): Promise<Record<string, string>> {
    try {
      return await this.redis.hgetall(keys.pools);
    } catch (e) {
      if (!/WRONGTYPE/.test((e as Error).message)) throw e;
      this.refused(keys.pools, 'not a hash of pools; no pool is read until a build queued replaces it');
      return {};
    }
  }
}

/** `cc=8.0,gpu=A100` → {cc: '8.0', gpu: 'A100'} (the pools hash stores targets this way). */
export function targetFromCanonical(canon: string): Labels {
  const out: Labels = {};
  if (canon === '') return out;
  for (const pair of canon.split(',')) {
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}
