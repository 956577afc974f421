// Checks a build's event stream against the protocol schema and the invariants every surface
// relies on. Shared by the CLI, service, HTTP, MCP and e2e tests.
//
//   const events = assertEventStream(parseNdjson(stdout));   // throws listing every violation
import { BuildEvent } from '../../apps/shared/protocol.js';

export interface InvariantOptions {
  /** Crashed builds end without closing their phases (the worker died mid-build). */
  allowOpenPhases?: boolean;
}

export function eventStreamProblems(raw: unknown[], opts: InvariantOptions = {}): string[] {
  const problems: string[] = [];
  const events: BuildEvent[] = [];
  raw.forEach((r, i) => {
    const p = BuildEvent.safeParse(r);
    if (p.success) events.push(p.data);
    else problems.push(`event ${i} does not match the schema: ${p.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
  });
  if (problems.length) return problems;
  if (events.length === 0) return ['no events'];
  const last = events[events.length - 1];
  // Only a build that never got to run (cancelled while queued, worker dead on arrival) lacks a start.
  const neverRan = !events.some((e) => e.type.startsWith('phase.')) && last.type === 'build.finished' && last.status !== 'succeeded';
  if (events[0].type !== 'build.started' && !neverRan) problems.push(`first event is ${events[0].type}, not build.started`);
  if (last.type !== 'build.finished') problems.push(`last event is ${last.type}, not build.finished`);
  if (events.filter((e) => e.type === 'build.finished').length !== 1) problems.push('not exactly one build.finished');
  const buildId = events[0].buildId;
  const open = new Map<number, { nbSteps: number; stepsDone: number; parentId: number | null }>();
  const seen = new Set<number>();
  let prevSeq = -1;
  for (const e of events) {
    if (e.buildId !== buildId) problems.push(`seq ${e.seq}: buildId ${e.buildId} != ${buildId}`);
    if (e.seq <= prevSeq) problems.push(`seq does not rise: ${prevSeq} then ${e.seq}`);
    prevSeq = e.seq;
    switch (e.type) {
      case 'phase.start':
        if (seen.has(e.id)) problems.push(`phase ${e.id} started twice`);
        seen.add(e.id);
        if (e.parentId !== null && !open.has(e.parentId)) problems.push(`phase ${e.id} (${e.name}) starts under ${e.parentId}, which is not open`);
        if (e.nbSteps <= 0) problems.push(`phase ${e.id} has nbSteps ${e.nbSteps}`);
        open.set(e.id, { nbSteps: e.nbSteps, stepsDone: 0, parentId: e.parentId });
        break;
      case 'phase.step': {
        const p = open.get(e.id);
        if (!p) problems.push(`step for phase ${e.id}, which is not open`);
        else {
          if (e.stepsDone !== e.step + 1) problems.push(`phase ${e.id}: stepsDone ${e.stepsDone} != step + 1`);
          if (e.step < 0 || e.step >= p.nbSteps) problems.push(`phase ${e.id}: step ${e.step} outside [0, ${p.nbSteps})`);
          if (e.stepsDone < p.stepsDone) problems.push(`phase ${e.id}: steps go backwards`);
          p.stepsDone = e.stepsDone;
        }
        break;
      }
      case 'phase.finish':
        if (!open.has(e.id)) problems.push(`finish for phase ${e.id}, which is not open`);
        open.delete(e.id);
        break;
    }
  }
  if (open.size && !opts.allowOpenPhases) problems.push(`${open.size} phase(s) never finished: ${[...open.keys()].slice(0, 5).join(', ')}`);
  return problems;
}

export function assertEventStream(raw: unknown[], opts?: InvariantOptions): BuildEvent[] {
  const problems = eventStreamProblems(raw, opts);
  if (problems.length) throw new Error(`event stream violates the protocol:\n  ${problems.slice(0, 20).join('\n  ')}`);
  return raw as BuildEvent[];
}
