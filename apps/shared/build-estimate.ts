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
