// The `progress` number of MCP progress notifications: the amount of work TensorRT has reported
// (phases started plus steps completed, over the whole tree). A percentage was tried first, but the
// phase counts cannot predict a build's length: the bulk of a real build sits inside one step of
// "Building engine (6)", under parents that finish early ("Computing profile costs" at 4 of 10),
// so an estimated bar stood still near 40 % for most of the build. The count rises with every
// callback, needs no guess, and the message names where the builder is.
//
// The MCP spec says the value MUST increase with every notification, yet heartbeats carry no new
// work: a notification without new work nudges the value by 0.001 (a thousand heartbeats make one
// step), so every notification still rises.

const NUDGE = 0.001;

export class MonotonicProgress {
  private last = -Infinity;

  /** The next value for a notification, strictly above the previous one. */
  next(work: number): number {
    const target = Number.isFinite(work) ? Math.max(0, work) : 0;
    if (target > this.last) {
      this.last = target;
    } else {
      const nudged = Math.round((this.last + NUDGE) * 1000) / 1000;
      // Rounding keeps the numbers readable; past 2^43 it could stop rising, so fall back.
      this.last = nudged > this.last ? nudged : this.last + NUDGE;
    }
    return this.last;
  }
}
