// A predicted end for a build, from earlier builds of the same model, options and backend.
//
// TensorRT reports no "percent done": its phase tree changes shape with the model and the
// version, and real builds have long silent stretches. What repeats between two builds of the
// same model with the same options is the *sequence* of phases and steps. So a finished build is
// kept as a profile: for each milestone (a phase of the upper tree starting, reaching a step,
// finishing) the time it was first reached, plus the total duration. During a new build, the
// latest milestone it reached that a profile also has says where it stands on that profile's
// clock; the profile's remaining time, scaled by how fast this build has been running relative
// to it, is the prediction. Several profiles give a range. No profile, or no shared milestone
// yet: no prediction (never a guess).
//
// Only the upper levels of the tree become milestones (MAX_DEPTH), and only the first instances
// of a repeated phase (MAX_INSTANCE): that bounds a profile to a few thousand entries however
// many callbacks the build makes, and those levels are where the long stretches are.
import type { BuildEvent } from './protocol.js';

/** Depth (0 = root) up to which phases become milestones. */
export const MAX_DEPTH = 5;
/** Instances (per name path) beyond which repeats are not milestones. */
export const MAX_INSTANCE = 8;
/** A hard cap on milestones per profile, whatever the tree looks like. */
export const MAX_MARKS = 6000;

export interface BuildProfile {
  /** Wall duration of the whole build (build.finished durationMs). */
  durationMs: number;
  /** Milestone key → ms since build start when it was first reached. */
  marks: Record<string, number>;
  /** The build worker's peak host memory, bytes (build.finished memory), when it was measured. */
  peakHostBytes?: number;
  /** The time shares of its phase kinds (PhaseShareRecorder, below): what the percentage rests on. */
  shares?: Record<string, number>;
}

export interface Estimate {
  /** Best guess of the time left, ms (median over the basis). */
  remainingMs: number;
  /** The spread of the basis: lowest and highest remaining time, ms. */
  lowMs: number;
  highMs: number;
  /** How many earlier builds the estimate rests on. */
  basis: number;
  /** The milestone it was made from (for "why"). */
  at: string;
}

interface OpenPhase {
  path: string;
  depth: number;
  key: string | null;
}

/**
 * Folds a build's events into milestones. Used twice: on a finished build, to make its profile;
 * during a running build, to know the latest milestone reached.
 */
export class MilestoneRecorder {
  readonly marks = new Map<string, number>();
  /** The latest milestone reached (insertion order = time order). */
  latest: string | null = null;
  latestT = 0;
  private readonly open = new Map<number, OpenPhase>();

  apply(ev: BuildEvent): void {
    switch (ev.type) {
      case 'phase.start': {
        const parent = ev.parentId === null ? undefined : this.open.get(ev.parentId);
        // A parent that was not tracked (too deep) makes the child too deep as well.
        const depth = ev.parentId === null ? 0 : parent ? parent.depth + 1 : MAX_DEPTH + 1;
        const path = parent ? `${parent.path}/${ev.name}` : ev.name;
        const key = depth <= MAX_DEPTH && ev.instance < MAX_INSTANCE ? `${path}#${ev.instance}` : null;
        if (depth <= MAX_DEPTH) this.open.set(ev.id, { path, depth, key });
        if (key) this.mark(key, ev.t);
        return;
      }
      case 'phase.step': {
        const p = this.open.get(ev.id);
        if (p?.key) this.mark(`${p.key}@${ev.stepsDone}`, ev.t);
        return;
      }
      case 'phase.finish': {
        const p = this.open.get(ev.id);
        if (p?.key) this.mark(`${p.key}$`, ev.t);
        this.open.delete(ev.id);
        return;
      }
      default:
        return;
    }
  }

  profile(durationMs: number): BuildProfile {
    return { durationMs, marks: Object.fromEntries(this.marks) };
  }

  private mark(key: string, t: number): void {
    if (this.marks.has(key)) return;
    if (this.marks.size >= MAX_MARKS) return;
    this.marks.set(key, t);
    this.latest = key;
    this.latestT = t;
  }
}

/** Never trust a build to run more than this much faster or slower than its basis. */
const MIN_PACE = 0.25;
const MAX_PACE = 4;
/** Below this much elapsed time on both clocks, the pace is noise: assume the same pace. */
const PACE_FLOOR_MS = 250;
/**
 * The least half-width of the range, relative to the best guess, by how many earlier builds it
 * rests on (the last entry for more). One earlier build says nothing about how much builds vary,
 * and two or three identical profiles would otherwise give a range of zero width: a precision
 * the method does not have.
 */
export const MIN_SPREAD = [0.25, 0.15, 0.1] as const;

/**
 * The prediction at elapsed time `nowT` of a build whose latest milestone is `latest` (reached
 * at `latestT`), from profiles of earlier builds. Undefined when no profile has that milestone.
 */
export function estimateRemaining(profiles: readonly BuildProfile[], latest: string | null, latestT: number, nowT: number): Estimate | undefined {
  if (!latest) return undefined;
  const guesses: number[] = [];
  for (const p of profiles) {
    const at = p.marks[latest];
    if (at === undefined || !(p.durationMs > 0)) continue;
    // How fast this build runs compared with the profile, measured up to the shared milestone.
    const pace = at < PACE_FLOOR_MS || latestT < PACE_FLOOR_MS ? 1 : clamp(latestT / at, MIN_PACE, MAX_PACE);
    const remainingThere = Math.max(0, p.durationMs - at) * pace;
    // Time spent since the milestone counts against what is left (silent stretches included).
    guesses.push(Math.max(0, remainingThere - Math.max(0, nowT - latestT)));
  }
  if (guesses.length === 0) return undefined;
  guesses.sort((a, b) => a - b);
  const mid = guesses.length >> 1;
  const median = guesses.length % 2 ? guesses[mid] : (guesses[mid - 1] + guesses[mid]) / 2;
  const spread = MIN_SPREAD[Math.min(guesses.length, MIN_SPREAD.length) - 1];
  return {
    remainingMs: median,
    lowMs: Math.min(guesses[0], median * (1 - spread)),
    highMs: Math.max(guesses[guesses.length - 1], median * (1 + spread)),
    basis: guesses.length,
    at: latest,
  };
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

// ───────────────────────────── phase shares ─────────────────────────────
//
// What the percentage rests on (build-view.ts, treeFraction). TensorRT declares each phase's steps
// but not how long they take: in one simulated 30 s build "Building engine" has 6 steps, the
// third of which holds 97 % of the time, and "Computing profile costs" declares 10 steps and
// finishes early at 4. Equal steps then freeze the percentage for most of the build. So each
// finished build leaves, per phase kind (its name path), the share of time it took:
// - `path@k/n`: step k's share of what was left of its phase (of n declared steps) from the step's
//   start; only a phase declaring the same number of steps uses it (a phase whose steps count the
//   model's layers has another shape in every model);
// - `path`: a child phase's share of what was left of its parent's step from the child's start.
// Both are "share of the remainder", which is how the view spends its bar: a kind it has seen
// gets that share, one it has not gets an even split. Shares of any model count (the phase tree's
// shape and where the time goes repeat across models far more than their durations).

/** Phases below this depth, and steps past this index, leave no share (bounds a profile). */
const SHARE_MAX_DEPTH = 8;
export const SHARE_MAX_STEP = 64;
/** Kinds kept per profile and handed to a build (the most frequent first). */
export const MAX_SHARE_KINDS = 400;

interface ShareOpen {
  path: string;
  depth: number;
  parentId: number | null;
  start: number;
  nbSteps: number;
  /** Its current step, when that step began, and the time each earlier step took. */
  step: number;
  stepT: number;
  stepMs: Array<[number, number]>;
  /** Its children that finished within its current step: their start and end. */
  done: Array<{ path: string; start: number; end: number }>;
}

/** Folds a build's events into the time shares of its phase kinds (see above). */
export class PhaseShareRecorder {
  private readonly open = new Map<number, ShareOpen>();
  private readonly sums = new Map<string, { sum: number; n: number }>();

  apply(ev: BuildEvent): void {
    switch (ev.type) {
      case 'phase.start': {
        const parent = ev.parentId === null ? undefined : this.open.get(ev.parentId);
        const depth = ev.parentId === null ? 0 : parent ? parent.depth + 1 : SHARE_MAX_DEPTH + 1;
        if (depth > SHARE_MAX_DEPTH) return;
        const path = parent ? `${parent.path}/${ev.name}` : ev.name;
        this.open.set(ev.id, { path, depth, parentId: ev.parentId, start: ev.t, nbSteps: ev.nbSteps, step: 0, stepT: ev.t, stepMs: [], done: [] });
        return;
      }
      case 'phase.step': {
        const p = this.open.get(ev.id);
        if (p && ev.stepsDone > p.step) this.endStep(p, ev.t, ev.stepsDone);
        return;
      }
      case 'phase.finish': {
        const p = this.open.get(ev.id);
        if (!p) return;
        this.endStep(p, ev.t, p.step + 1);
        // Each step's time over what was left of the phase from that step's start.
        let left = ev.t - p.start;
        for (const [k, ms] of p.stepMs) {
          if (left > 0) this.add(stepShareKey(p.path, k, p.nbSteps), ms / left);
          left -= ms;
        }
        this.open.delete(ev.id);
        const parent = p.parentId === null ? undefined : this.open.get(p.parentId);
        parent?.done.push({ path: p.path, start: p.start, end: ev.t });
        return;
      }
      default:
        return;
    }
  }

  /** Mean share per kind, at most MAX_SHARE_KINDS (keepShares says which). */
  shares(): Record<string, number> {
    return keepShares(this.sums);
  }

  /** The phase's current step ended at `t` (the next is `next`): its time, and its children's shares. */
  private endStep(p: ShareOpen, t: number, next: number): void {
    // Steps coalesced in transit arrive as one: their time is split evenly among them.
    const n = Math.max(1, next - p.step);
    for (let k = p.step; k < p.step + n && k < SHARE_MAX_STEP; k++) p.stepMs.push([k, (t - p.stepT) / n]);
    for (const c of p.done) {
      const rest = t - c.start;
      if (rest > 0) this.add(c.path, (c.end - c.start) / rest);
    }
    p.done = [];
    p.stepT = t;
    p.step = next;
  }

  private add(kind: string, share: number): void {
    if (!Number.isFinite(share)) return;
    const v = Math.min(1, Math.max(0, share));
    const s = this.sums.get(kind);
    if (s) {
      s.sum += v;
      s.n++;
    } else this.sums.set(kind, { sum: v, n: 1 });
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The phase-shares key of step k of a phase of nbSteps steps at `path`. */
export function stepShareKey(path: string, k: number, nbSteps: number): string {
  return `${path}@${k}/${nbSteps}`;
}

/** The mean share per kind over earlier builds' profiles (of any model), most common kinds first. */
export function mergeShares(profiles: Iterable<BuildProfile>): Record<string, number> {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const p of profiles) {
    for (const [k, v] of Object.entries(p.shares ?? {})) {
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const s = sums.get(k);
      if (s) {
        s.sum += v;
        s.n++;
      } else sums.set(k, { sum: v, n: 1 });
    }
  }
  return keepShares(sums);
}

/**
 * The kinds kept when there are more than MAX_SHARE_KINDS: the shallowest first (the upper phases
 * hold the bar's largest parts, and a few of them outweigh thousands of per-node timings), then
 * the most often seen.
 */
function keepShares(sums: Map<string, { sum: number; n: number }>): Record<string, number> {
  const depth = (k: string) => k.split('/').length;
  const kinds = [...sums].sort((a, b) => depth(a[0]) - depth(b[0]) || b[1].n - a[1].n).slice(0, MAX_SHARE_KINDS);
  return Object.fromEntries(kinds.map(([k, s]) => [k, round3(s.sum / s.n)]));
}

// ───────────────────────────── the prior ─────────────────────────────
//
// A first build has no history: every step an even part of its phase, every child half of what is
// left. On TensorRT's tree that gives the silent top (6 steps, one of which holds nearly all the
// time) the bar and leaves tactic timing, where the time goes, a sliver: a 30 s simulated build
// sat at 37 % from 2 s to 29 s. So phase kinds of the TensorRT 10/11 tree (docs/tensorrt.md, "The
// phase tree of a real build"; the simulator's plan follows it) start from these shares, each of
// what is left as above. They are a judgement, not a measurement: the tree's shape is observed
// (10.16), the weights only say where builds are known to spend their time (most in timing
// tactics, node timing ahead of reformats; cloning, preparing and graph optimization short;
// serialization the bulk of what follows). No real TensorRT build has been timed here to fit them.
// A phase tree with other names or step counts gets nothing from them (even steps, as before):
// no logic rests on a name. Learned shares always win kind by kind (withPrior), which also says
// where a build's shares came from (BuildEstimator.sharesSource), so nothing claims more than it
// knows; the predicted end of a first build stays a range from its own progress
// (estimateFromProgress, source "progress", basis 0), wide at first and narrowing.

const ROOT = 'Building engine';
const SUBGRAPH = `${ROOT}/Building engine from subgraph`;
const PROFILE = `${SUBGRAPH}/Computing profile costs`;
const TACTICS = `${PROFILE}/Timing tactics`;
const NODES = `${TACTICS}/Timing graph nodes`;
const REFORMATS = `${TACTICS}/Timing tensor reformats`;
const REFORMAT_COSTS = `${REFORMATS}/Computing reformatting costs`;

/** Built-in shares of the TensorRT 10/11 phase kinds (see above), keyed as PhaseShareRecorder keys them. */
export const PHASE_SHARE_PRIOR: Readonly<Record<string, number>> = Object.freeze({
  // The root, 6 steps: cloning, preparing, the subgraph (optimizing and timing), serialization.
  [stepShareKey(ROOT, 0, 6)]: 0.02,
  [stepShareKey(ROOT, 1, 6)]: 0.02,
  [stepShareKey(ROOT, 2, 6)]: 0.95,
  [stepShareKey(ROOT, 3, 6)]: 0.9,
  // Children that are their parent step's whole work.
  [`${ROOT}/Cloning network graph`]: 0.95,
  [`${ROOT}/Preparing graph for optimization`]: 0.95,
  [SUBGRAPH]: 0.98,
  [`${SUBGRAPH}/Optimizing graph`]: 0.05,
  [PROFILE]: 0.97,
  // "Computing profile costs" (10 steps, ends early at 4): timing in its first step, refit after.
  [stepShareKey(PROFILE, 0, 10)]: 0.92,
  [TACTICS]: 0.95,
  // "Timing tactics" (3 steps, ends early at 1): graph nodes, then reformats.
  [stepShareKey(TACTICS, 0, 3)]: 0.65,
  [stepShareKey(TACTICS, 1, 3)]: 0.9,
  [NODES]: 0.98,
  [`${NODES}/Evaluating tactic times`]: 0.95,
  [`${NODES}/Evaluating tactic times/Measuring tactic time`]: 0.9,
  [REFORMATS]: 0.98,
  [REFORMAT_COSTS]: 0.95,
  [`${REFORMAT_COSTS}/Evaluating tactic times`]: 0.95,
  [`${REFORMAT_COSTS}/Evaluating tactic times/Measuring tactic time`]: 0.9,
});

/** Where a build's phase shares came from: earlier builds, the prior, or both (kinds without history from the prior). */
export type SharesSource = 'history' | 'prior' | 'mixed';

/**
 * Learned shares, with the prior for kinds they lack. Learned ones win kind by kind: a share an
 * earlier build measured says more about this machine and version than the prior does.
 */
export function withPrior(learned: Readonly<Record<string, number>>): { shares: Record<string, number>; source: SharesSource } {
  const fromPrior = Object.keys(PHASE_SHARE_PRIOR).filter((k) => !(k in learned));
  const nLearned = Object.keys(learned).length;
  const source: SharesSource = nLearned === 0 ? 'prior' : fromPrior.length === 0 ? 'history' : 'mixed';
  return { shares: { ...Object.fromEntries(fromPrior.map((k) => [k, PHASE_SHARE_PRIOR[k]])), ...learned }, source };
}

/** Below this much progress or time a first build's own pace says too little to extrapolate. */
const PROGRESS_MIN_FRACTION = 0.03;
const PROGRESS_MIN_MS = 2000;

/**
 * A first build's predicted end (no earlier build of its kind): the time so far stretched over the
 * progress so far. The percentage is a shape, not a clock, so the range is wide at first and
 * narrows as the build goes: from half to three times the extrapolation of what is left at the
 * start, tightening with the fraction done. Labelled `source: "progress"` and `basis: 0`.
 */
export function estimateFromProgress(fraction: number, elapsedMs: number): { remainingMs: number; lowMs: number; highMs: number; basis: 0; source: 'progress' } | undefined {
  if (!(fraction >= PROGRESS_MIN_FRACTION) || fraction >= 1 || !(elapsedMs >= PROGRESS_MIN_MS)) return undefined;
  const remainingMs = (elapsedMs * (1 - fraction)) / fraction;
  const doubt = 1 - fraction;
  return { remainingMs, lowMs: remainingMs * (1 - 0.5 * doubt), highMs: remainingMs * (1 + 2 * doubt), basis: 0, source: 'progress' };
}
