// Who owns a farm build, as serve sees it: a build belongs to the worker that claimed it while
// that worker beats; serve takes over one whose worker is lost (retrying it on another worker,
// or ending it as crashed), ends the ones it must end itself (cancelled while queued) and notes
// why a queued build waits. Every write is made as an owner (FarmStore: append and record only
// while the owner still holds the build), so two serves and a late worker never both end it.
// Used by QueueBuildService (queue-service.ts).
import { PROTOCOL_VERSION, type BuildEvent } from '../shared/protocol.js';
import type { FarmStore, WorkerInfo } from './farm-store.js';
import { formatLabels, matches, type Labels } from './labels.js';
import { RECONNECT_MAX_MS, type LogLine } from './redis.js';
import type { BuildMirror } from './build-mirror.js';
import type { RemoteBuild } from './remote-build.js';

/** The owner serve writes as (suffixed with what it is doing: cancel, lost-<time>). */
export const SERVE_OWNER = 'serve';

export interface OwnershipDeps {
  log: LogLine;
  /** Must match the workers' heartbeat TTL (default 10 s). */
  heartbeatTtlMs?: number;
  /** When the command connection last became ready: heartbeats missed during an outage do not count. */
  readySince(): number;
  /** Queues a retry of the build in its pool. */
  addJob(id: string, target: Labels, attempt: number): Promise<void>;
  /** Tells every serve that the farm view changed (builds serve ends itself change it without any worker beating). */
  farmChanged(buildId: string): Promise<void>;
}

export class BuildOwnership {
  constructor(
    private readonly store: FarmStore,
    private readonly mirror: BuildMirror,
    private readonly deps: OwnershipDeps,
  ) {}

  async noteWaiting(b: RemoteBuild, live: WorkerInfo[]): Promise<void> {
    const target = b.farm.target;
    const ok = live.some((w) => matches(w.labels, target));
    const reason = ok
      ? undefined
      : `no live worker matches target ${formatLabels(target)}` +
        (live.length ? ` (live: ${live.map((w) => `${w.id} ${formatLabels(w.labels)}`).join('; ')})` : ' (no live workers)') +
        '; the build stays queued until one does';
    if (reason === b.farm.waiting) return;
    b.setFarm({ waiting: reason });
    const message = reason ?? `a live worker now matches target ${formatLabels(target)}`;
    if (reason || b.lastSeq >= 0) await this.appendAs(b, '', [logEvent(b.id, reason ? 'warning' : 'info', message)]);
  }

  async checkOwner(b: RemoteBuild): Promise<void> {
    // Right after a reconnect, heartbeat keys may have expired during the outage: give workers
    // time to reconnect themselves (their retry timers are not in step with ours) and beat again
    // before calling any of them lost.
    const ttl = this.deps.heartbeatTtlMs ?? 10_000;
    if (Date.now() - this.deps.readySince() < ttl + 2 * RECONNECT_MAX_MS + 500) return;
    const fields = await this.store.getBuildFields(b.id);
    if (fields.state === undefined) {
      // Redis no longer has the build at all: it restarted without persistence (or was flushed).
      // Nobody can finish it in Redis any more; end it here so no client waits forever.
      this.deps.log(`build ${b.id} is gone from Redis (restarted without persistence?); ending it as crashed`);
      const rec = b.record();
      const t = rec.startedAt ? Date.now() - Date.parse(rec.startedAt) : 0;
      b.ingest([
        {
          v: PROTOCOL_VERSION,
          buildId: b.id,
          seq: b.lastSeq + 1,
          t,
          type: 'build.finished',
          status: 'crashed',
          durationMs: t,
          error: 'the build farm lost this build: Redis restarted without its data (turn on appendonly)',
        },
      ]);
      return;
    }
    const owner = fields.owner ?? '';
    // Back in the queue with no owner: a worker that shut down handed it back (or another serve
    // retried it after a lost worker). The next attempt's build.started moves it on again. Its
    // job is queued again here too: whoever put it back has added it already (the same job id,
    // so this adds nothing), unless it died in between, and then this is what keeps the build
    // from waiting for a job that never comes.
    if (!owner && fields.state === 'queued' && b.state !== 'queued') {
      b.setState('queued');
      b.setFarm({ worker: undefined });
      await this.deps.addJob(b.id, b.farm.target, Number(fields.attempts ?? b.farm.attempt) + 1);
      return;
    }
    if (!owner || owner.startsWith(SERVE_OWNER)) return;
    const workerId = owner.slice(0, owner.lastIndexOf('/'));
    if (b.state === 'queued' && fields.state === 'running') {
      b.setState('running');
      b.setFarm({ waiting: undefined });
    }
    const runs = await this.store.workerRuns(workerId, b.id);
    if (runs === 'yes') return;
    const newOwner = `${SERVE_OWNER}-lost-${Date.now()}`;
    if (!(await this.store.takeover(b.id, owner, newOwner))) return;
    const attempt = Number(fields.attempts ?? b.farm.attempt);
    const why =
      runs === 'gone'
        ? `worker lost: ${workerId} stopped sending heartbeats (none for ${ttl} ms)`
        : `worker lost: ${workerId} restarted and its new process does not run this build`;
    this.deps.log(`build ${b.id}: ${why}`);
    const closeOpen = b.openPhases().map((id) => ({ v: PROTOCOL_VERSION, buildId: b.id, seq: 0, t: 0, type: 'phase.finish', id, stepsDone: 0, early: true }) as BuildEvent);
    if (attempt <= b.farm.retries) {
      await this.appendAs(b, newOwner, [...closeOpen, logEvent(b.id, 'warning', `${why}; retrying (attempt ${attempt + 1} of ${b.farm.retries + 1})`)]);
      await this.store.requeue(b.id, newOwner);
      b.setState('queued');
      b.setFarm({ worker: undefined });
      await this.deps.addJob(b.id, b.farm.target, attempt + 1);
      return;
    }
    await this.finishAs(b, newOwner, 'crashed', 'worker lost', [...closeOpen, logEvent(b.id, 'error', why)]);
  }

  /** `owner` '' appends whoever owns the build (notes while queued); else only while `owner` does. */
  async appendAs(b: RemoteBuild, owner: string, events: BuildEvent[]): Promise<BuildEvent[] | undefined> {
    const stored = await this.store.append(b.id, events, owner);
    // The reader delivers them too; ingesting now keeps the record current for the caller.
    if (stored) b.ingest(stored);
    return stored;
  }

  /** Ends a build serve owns (cancelled while queued, worker lost), in the stream and the record. */
  async finishAs(b: RemoteBuild, owner: string, status: 'cancelled' | 'crashed', error: string | undefined, before: BuildEvent[]): Promise<void> {
    const rec = b.record();
    const startMs = rec.startedAt ? Date.parse(rec.startedAt) : Date.now();
    const finished = {
      v: PROTOCOL_VERSION,
      buildId: b.id,
      seq: 0,
      t: Date.now() - startMs,
      type: 'build.finished',
      status,
      durationMs: rec.startedAt ? Date.now() - startMs : 0,
      ...(error ? { error } : {}),
    } as BuildEvent;
    const stored = await this.appendAs(b, owner, [...before, finished]);
    if (!stored) return;
    // With its view, like the records workers write: a serve that loads this record later shows
    // the finished build's tree, logs and ending, not an empty tree still "queued".
    await this.store.putRecord({ ...b.record(), view: await this.mirror.wholeView(b) }, owner);
    await this.deps.farmChanged(b.id);
  }
}

export function logEvent(buildId: string, severity: 'info' | 'warning' | 'error', message: string): BuildEvent {
  return { v: PROTOCOL_VERSION, buildId, seq: 0, t: 0, type: 'log', severity, message } as BuildEvent;
}
