// The LSP `percentage` of a build: the shared build view's fraction (apps/shared/build-view.ts:
// the outermost phase's steps refined by the active child, recursively, rising only), as an
// integer. Editors draw a bar that jumps backwards as broken, so the figure is also a ratchet
// here (a view rebuilt from a snapshot starts from what it holds), and it stays below 100 until
// the engine is written.
import type { BuildView } from '../shared/build-view.js';

/** Highest percentage a running build may show: 100 is kept for "engine written". */
export const RUNNING_CAP = 99;

export class RisingPercentage {
  private value = 0;

  /** The next percentage (an integer, as the protocol wants), never below the previous one. */
  next(view: BuildView): number {
    const estimate = Math.floor(view.fraction() * 100);
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
