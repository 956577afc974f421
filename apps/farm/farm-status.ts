// What the farm is doing, read from Redis alone, so serve (GET /api/farm) and the CLI
// (`trt-build-studio farm status`) show the same thing: the live workers with their labels, slots,
// builds and last heartbeat; each pool's queued builds and why each one waits; running builds;
// and the most recent endings.
import type { FarmStatus } from '../shared/farm-status.js';
import type { BuildState } from '../shared/protocol.js';
import { FINAL_STATES, targetFromCanonical, type FarmRecord, type FarmStore, type WorkerInfo } from './farm-store.js';
import { formatLabels, matches, type Labels } from './labels.js';

/** Why a queued build has not started: said the same way serve's records say it. */
export function waitingReason(target: Labels, live: WorkerInfo[]): string {
  const able = live.filter((w) => matches(w.labels, target));
  if (able.length === 0) {
    const seen = live.length ? live.map((w) => `${w.id} (${formatLabels(w.labels)})`).join(', ') : 'none';
    return `no live worker matches target ${formatLabels(target)}; live workers: ${seen}`;
  }
  const free = able.filter((w) => w.running.length < w.concurrency);
  if (free.length === 0) return `all ${able.length} matching worker(s) are busy (${able.map((w) => w.id).join(', ')})`;
  return `about to be taken by ${free.map((w) => w.id).join(' or ')}`;
}

/** One build as the farm view needs it: its record, and its state and owner where Redis has fresher ones. */
export interface FarmStatusBuild {
  id: string;
  rec: FarmRecord;
  state?: BuildState;
  owner?: string;
}

/** Reads every build in the history from Redis (the CLI, which follows nothing). */
export async function readFarmStatus(store: FarmStore, opts: { recent?: number; now?: number } = {}): Promise<FarmStatus> {
  const live = await store.liveWorkers();
  const ids = await store.historyIds();
  const builds = (
    await Promise.all(
      ids.map(async (id) => {
        const [rec, fields] = await Promise.all([store.getRecord(id), store.getBuildFields(id)]);
        return rec && { id, rec, state: fields.state as BuildState | undefined, owner: fields.owner };
      }),
    )
  ).filter((x): x is Exclude<typeof x, undefined> => x !== undefined);
  return composeFarmStatus(builds, live, Object.values(await store.pools()), opts);
}

/**
 * The view from what is known of the builds, the live workers and the pools (canonical targets):
 * from Redis (readFarmStatus), or from the mirrors serve keeps of every build in the history.
 */
export function composeFarmStatus(builds: FarmStatusBuild[], live: WorkerInfo[], poolTargets: string[], opts: { recent?: number; now?: number } = {}): FarmStatus {
  const now = opts.now ?? Date.now();
  const pools = new Map<string, FarmStatus['pools'][number]>();
  const running: FarmStatus['running'] = [];
  const ended: FarmStatus['recent'] = [];
  for (const x of builds) {
    const s = x.state ?? x.rec.state;
    const target = x.rec.farm?.target ?? {};
    if (s === 'queued') {
      const key = formatLabels(target);
      const pool = pools.get(key) ?? { target, queued: [] };
      pool.queued.push({ id: x.id, queuedAt: x.rec.queuedAt, waiting: waitingReason(target, live) });
      pools.set(key, pool);
    } else if (FINAL_STATES.has(s)) {
      ended.push({ id: x.id, state: s, worker: x.rec.farm?.worker?.id, finishedAt: x.rec.finishedAt, ...(x.rec.outcome?.error ? { error: x.rec.outcome.error } : {}) });
    } else {
      running.push({ id: x.id, worker: x.rec.farm?.worker?.id ?? x.owner?.split('/')[0], target, startedAt: x.rec.startedAt, attempt: x.rec.farm?.attempt ?? 1 });
    }
  }
  for (const canon of poolTargets) {
    const target = targetFromCanonical(canon);
    const key = formatLabels(target);
    if (!pools.has(key)) pools.set(key, { target, queued: [] });
  }
  ended.sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? ''));
  return {
    at: new Date(now).toISOString(),
    workers: live
      .map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        labels: w.labels,
        slots: w.concurrency,
        running: w.running,
        lastHeartbeatMsAgo: typeof w.beatAt === 'number' ? Math.max(0, now - w.beatAt) : null,
      }))
      .sort((a, b) => a.id.localeCompare(b.id)),
    pools: [...pools.values()].sort((a, b) => formatLabels(a.target).localeCompare(formatLabels(b.target))),
    running,
    recent: ended.slice(0, opts.recent ?? 20),
  };
}

/** The status as a terminal shows it. */
export function formatFarmStatus(s: FarmStatus): string {
  const lines: string[] = [];
  const busy = s.workers.reduce((n, w) => n + w.running.length, 0);
  const slots = s.workers.reduce((n, w) => n + w.slots, 0);
  lines.push(`Workers: ${s.workers.length} live, ${busy} of ${slots} slot(s) busy`);
  for (const w of s.workers) {
    const beat = w.lastHeartbeatMsAgo === null ? '' : `, heartbeat ${(w.lastHeartbeatMsAgo / 1000).toFixed(1)} s ago`;
    lines.push(
      `  ${w.id}  ${formatLabels(w.labels)}  ${w.running.length}/${w.slots} busy${w.running.length ? ` (${w.running.join(', ')})` : ''}  on ${w.host} pid ${w.pid}${beat}`,
    );
  }
  const queued = s.pools.reduce((n, p) => n + p.queued.length, 0);
  lines.push(`Queued: ${queued}`);
  for (const p of s.pools) {
    if (p.queued.length === 0) continue;
    lines.push(`  target ${formatLabels(p.target)}: ${p.queued.length} waiting`);
    for (const q of p.queued.slice(0, 10)) lines.push(`    ${q.id}  ${q.waiting}`);
    if (p.queued.length > 10) lines.push(`    … and ${p.queued.length - 10} more`);
  }
  lines.push(`Running: ${s.running.length}`);
  for (const r of s.running) lines.push(`  ${r.id}  on ${r.worker ?? '?'}  target ${formatLabels(r.target)}${r.attempt > 1 ? `  attempt ${r.attempt}` : ''}`);
  lines.push(`Recent endings: ${s.recent.length}`);
  for (const r of s.recent.slice(0, 10)) lines.push(`  ${r.id}  ${r.state}${r.worker ? ` on ${r.worker}` : ''}${r.error ? `: ${r.error}` : ''}`);
  return lines.join('\n');
}
