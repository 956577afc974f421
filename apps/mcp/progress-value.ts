// The `progress` number of MCP progress notifications. The MCP spec says it MUST increase with
// every notification, yet the phase-tree estimate can dip (a new child phase starts at 0 before
// its parent steps) and heartbeats carry no new work at all. So the estimate is clamped to never go
// back, and a notification without new work nudges the value by a tiny amount that can never reach
// the total: the number stays an honest percentage while every notification still rises.

export const PROGRESS_TOTAL = 100;
/** While running, the estimate stays at or below this: 100 means the engine is done. */
const ESTIMATE_CAP = 99;
/** Nudges approach this without reaching it, so the total stays reserved for a finished engine. */
const NUDGE_CEILING = 99.9;
/** 0.001 % per notification: an hour of 2.5 s heartbeats adds 1.4 %, which no one misreads. */
const NUDGE = 0.001;

export class MonotonicProgress {
  private last = -Infinity;

  /** The last value handed out, or undefined before the first one. */
  get value(): number | undefined {
    return this.last === -Infinity ? undefined : this.last;
  }

  /**
   * The next value for a notification, strictly above the previous one.
   * `fraction` is the current estimate (0..1); `done` marks the final notification of a build that
   * produced its engine (the only time the value reaches the total).
   */
  next(fraction: number, done = false): number {
    const clean = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
    const target = done ? PROGRESS_TOTAL : Math.floor(clean * ESTIMATE_CAP * 1000) / 1000;
    if (target > this.last) {
      this.last = target;
      return this.last;
    }
    const room = NUDGE_CEILING - this.last;
    // Near the ceiling the nudge shrinks with the room left, so it approaches without arriving
    // (for about a day of heartbeats, after which float precision would stall it).
    const step = room <= 0 ? NUDGE : room > 10 * NUDGE ? NUDGE : room / 1000;
    const next = this.last + step;
    this.last = next > this.last ? next : this.last + Number.EPSILON * 128;
    return this.last;
  }
}
