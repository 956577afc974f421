// The LSP `percentage` of a build: TensorRT reports no overall progress, so the estimate is the
// outermost open phase's steps, refined by how far its current child has got (recursively down the
// current path). Nested phases restart all the time ("Timing graph nodes" runs once per subgraph),
// which makes the raw estimate fall back; editors draw a bar that jumps backwards as broken, so
// the figure is a ratchet: it never goes down, and it stays below 100 until the engine is written.
import type { BuildProgressModel, PhaseLevel } from '../mcp/progress-model.js';

/** 0..1 from the current path, root first: (steps + fraction of the open child) / nbSteps. */
export function pathFraction(levels: readonly PhaseLevel[]): number {
  let inner = 0;
  for (let i = levels.length - 1; i >= 0; i--) {
    const { stepsDone, nbSteps } = levels[i];
    inner = nbSteps > 0 ? Math.min(1, (Math.min(Math.max(stepsDone, 0), nbSteps) + inner) / nbSteps) : 0;
  }
  return inner;
}

/** Highest percentage a running build may show: 100 is kept for "engine written". */
export const RUNNING_CAP = 99;

export class RisingPercentage {
  private value = 0;

  /** The next percentage (an integer, as the protocol wants), never below the previous one. */
  next(model: BuildProgressModel): number {
    const cur = model.current();
    const estimate = cur ? Math.floor(pathFraction(cur.levels) * 100) : 0;
    this.value = Math.max(this.value, Math.min(RUNNING_CAP, estimate));
    return this.value;
  }

  /** The end of a build: 100 only when it produced its engine; otherwise where it stopped. */
  final(succeeded: boolean): number {
    if (succeeded) this.value = 100;
    return this.value;
  }

  get current(): number {
    return this.value;
  }
}
