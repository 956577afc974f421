// Every Redis key and queue name the farm uses, in one place, so serve and workers (possibly
// different versions on different machines) agree on them and an operator can find them.
import * as crypto from 'node:crypto';

export const PREFIX = 'tbs';

export const keys = {
  /** Hash: state, record (BuildRecord JSON, the snapshot), request, target, owner, attempts. */
  build: (id: string) => `${PREFIX}:build:${id}`,
  /** Stream of one build's events; entry id `0-<seq+1>` so a seq maps to an id directly. */
  events: (id: string) => `${PREFIX}:events:${id}`,
  /** Counter that numbers one build's events across every writer (worker, serve). */
  seq: (id: string) => `${PREFIX}:seq:${id}`,
  /** Set once build.finished is in the stream; later events are refused. */
  final: (id: string) => `${PREFIX}:final:${id}`,
  /** Hash {n, reason}: how many times Stop was asked; the worker acts on each increment. */
  cancel: (id: string) => `${PREFIX}:cancel:${id}`,
  /** Sorted set of build ids by creation time: the history, bounded. */
  history: `${PREFIX}:history`,
  /** Counter for build ids. */
  idCounter: `${PREFIX}:ids`,
  /** Heartbeat of a worker: its description (JSON), with a TTL it keeps renewing. */
  worker: (id: string) => `${PREFIX}:worker:${id}`,
  /** Set of worker ids ever seen (entries whose heartbeat key expired are dead). */
  workers: `${PREFIX}:workers`,
  /** Hash: queue name → canonical target, every pool a build was ever queued in. */
  pools: `${PREFIX}:pools`,
  /**
   * Pub/sub channel: a build id is published here each time Stop is asked for it, so the worker
   * running it cancels at once (the counter in `cancel(id)` stays the record; a worker that
   * missed a message while disconnected re-reads the counters when it reconnects).
   */
  cancelChannel: `${PREFIX}:cancel-requests`,
  /**
   * Pub/sub channel: `{"id", "n", "reason"}` each time Stop is asked for a build, so the worker
   * running it cancels without reading the counter first (serve also publishes the bare id on
   * `cancelChannel`, for workers of earlier versions).
   */
  stopChannel: `${PREFIX}:stop-requests`,
  /** Pub/sub channel: a pool name is published here when a job is added to it, so idle workers
   * take it at once instead of at their next look (which stays, as the fallback). */
  queuedChannel: `${PREFIX}:jobs-queued`,
  /**
   * Stream of one serve process: an entry here ends that serve's blocking read of the build
   * streams, so a build it starts following is read at once (capped, with a TTL).
   */
  serveWake: (serveId: string) => `${PREFIX}:serve-wake:${serveId}`,
  /**
   * Pub/sub channel: a worker id is published here with every heartbeat, and when a worker leaves,
   * so serve's live farm view (GET /api/farm/events) changes at once.
   */
  farmChannel: `${PREFIX}:farm-changes`,
  /** Distributed lock on a shared artifact (timing cache). */
  lock: (name: string) => `${PREFIX}:lock:${name}`,
};

/** `{gpu: 'A100', cc: '8.0'}` → `cc=8.0,gpu=A100`: one spelling per target, whatever the key order. */
export function canonicalTarget(target: Record<string, string>): string {
  return Object.keys(target)
    .sort()
    .map((k) => `${k}=${target[k]}`)
    .join(',');
}

/**
 * The BullMQ job of one attempt of a build, whoever queues it (serve for the first attempt and
 * after a lost worker, a worker handing its build back at shutdown). attempts: 1 — BullMQ never
 * re-runs a build by itself; another attempt is the farm's decision (the request's `retries`),
 * recorded in the build's stream.
 */
export function buildJob(
  buildId: string,
  attempt: number,
): { name: string; data: { buildId: string }; opts: { jobId: string; attempts: number; removeOnComplete: boolean; removeOnFail: number } } {
  return { name: 'build', data: { buildId }, opts: { jobId: `${buildId}-a${attempt}`, attempts: 1, removeOnComplete: true, removeOnFail: 1000 } };
}

/**
 * One BullMQ queue per distinct target ("pool"). BullMQ queue names must avoid ':', and targets
 * may hold any characters, so the name is a digest; the pools hash maps it back.
 */
export function poolQueueName(target: Record<string, string>): string {
  const canon = canonicalTarget(target);
  if (canon === '') return 'tbs-pool-any';
  return `tbs-pool-${crypto.createHash('sha256').update(canon).digest('hex').slice(0, 16)}`;
}
