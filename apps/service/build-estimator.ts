// The predicted end of one build, as the service adds it to the stream: at start the profiles of
// earlier builds of the same kind are looked up (build-profiles.ts), every event goes through a
// MilestoneRecorder, each heartbeat gets `estimate` when the profiles give one, and a build that
// succeeds leaves its own profile for the next. No history, no estimate: never a guess.
import { MilestoneRecorder, estimateRemaining, type BuildProfile } from '../shared/build-estimate.js';
import type { BuildEvent } from '../shared/protocol.js';
import type { BuildProfileStore } from './build-profiles.js';

export class BuildEstimator {
  private readonly recorder = new MilestoneRecorder();

  constructor(
    private readonly store: BuildProfileStore,
    private readonly kind: string,
    private readonly profiles: readonly BuildProfile[] = store.profiles(kind),
  ) {}

  /** How many earlier builds the predictions rest on (0: there will be none). */
  get basis(): number {
    return this.profiles.length;
  }

  /** Folds the event in; a heartbeat comes back with the prediction at its moment, when there is one. */
  annotate(ev: BuildEvent): BuildEvent {
    this.recorder.apply(ev);
    if (ev.type !== 'heartbeat' || this.profiles.length === 0) return ev;
    const e = estimateRemaining(this.profiles, this.recorder.latest, this.recorder.latestT, ev.t);
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
      this.store.add(this.kind, this.recorder.profile(ev.durationMs));
      return undefined;
    } catch (e) {
      return e as Error;
    }
  }
}
