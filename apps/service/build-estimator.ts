// The predicted end of one build, as the service adds it to the stream: at start the profiles of
// earlier builds of the same kind are looked up (build-profiles.ts), every event goes through a
// MilestoneRecorder, each heartbeat gets `estimate` when the profiles give one, and a build that
// succeeds leaves its own profile for the next. No history, no estimate: never a guess.
import { MilestoneRecorder, estimateRemaining, type BuildProfile } from '../shared/build-estimate.js';
import type { BuildEvent } from '../shared/protocol.js';
import type { BuildProfileStore } from './build-profiles.js';

export class BuildEstimator {
  private readonly recorder = new MilestoneRecorder();
  private resolved?: { kind: string; profiles: readonly BuildProfile[] };

  /**
   * `kind` may be a function: it is then asked when the build's first event arrives, not when the
   * build is queued (whether its timing cache starts warm is known only once the builds queued
   * before it have saved theirs).
   */
  constructor(
    private readonly store: BuildProfileStore,
    private readonly kind: string | (() => string),
  ) {}

  /** How many earlier builds the predictions rest on (0: there will be none). */
  get basis(): number {
    return this.basisProfiles().profiles.length;
  }

  /** The earlier builds of this kind (for the memory estimate). */
  get profiles(): readonly BuildProfile[] {
    return this.basisProfiles().profiles;
  }

  /** Folds the event in; a heartbeat comes back with the prediction at its moment, when there is one. */
  annotate(ev: BuildEvent): BuildEvent {
    const { profiles } = this.basisProfiles();
    this.recorder.apply(ev);
    if (ev.type !== 'heartbeat' || profiles.length === 0) return ev;
    const e = estimateRemaining(profiles, this.recorder.latest, this.recorder.latestT, ev.t);
    if (!e) return ev;
    return { ...ev, estimate: { remainingMs: e.remainingMs, lowMs: e.lowMs, highMs: e.highMs, basis: e.basis } };
  }

  /**
   * A succeeded build's profile is kept for the next one. Failing to write it (a read-only state
   * directory) costs only future predictions, so it is reported, never thrown.
   */
  finished(ev: Extract<BuildEvent, { type: 'build.finished' }>): Error | undefined {
    if (ev.status !== 'succeeded') return undefined;
    try {
      const profile = this.recorder.profile(ev.durationMs);
      if (ev.memory) profile.peakHostBytes = ev.memory.peakHostBytes;
      this.store.add(this.basisProfiles().kind, profile);
      return undefined;
    } catch (e) {
      return e as Error;
    }
  }

  private basisProfiles(): { kind: string; profiles: readonly BuildProfile[] } {
    if (!this.resolved) {
      const kind = typeof this.kind === 'function' ? this.kind() : this.kind;
      this.resolved = { kind, profiles: this.store.profiles(kind) };
    }
    return this.resolved;
  }
}
