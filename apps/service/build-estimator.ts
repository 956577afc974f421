// The predicted end of one build, as the service adds it to the stream: at start the profiles of
// earlier builds of the same kind are looked up (build-profiles.ts), every event goes through a
// MilestoneRecorder, each heartbeat gets `estimate` when the profiles give one, and a build that
// succeeds leaves its own profile for the next. No history of the same kind: an estimate only from
// the build's own progress, labelled so (never a guess dressed as history).
import {
  MilestoneRecorder,
  PhaseShareRecorder,
  estimateFromProgress,
  estimateRemaining,
  mergeShares,
  withPrior,
  type BuildProfile,
  type SharesSource,
} from '../shared/build-estimate.js';
import type { BuildEvent } from '../shared/protocol.js';
import type { BuildProfileStore } from './build-profiles.js';

export class BuildEstimator {
  private readonly recorder = new MilestoneRecorder();
  private readonly shares = new PhaseShareRecorder();
  private resolved?: { kind: string; profiles: readonly BuildProfile[] };
  private source?: SharesSource;

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

  /**
   * Folds the event in. build.started comes back with the phase shares (the percentage's weights):
   * those earlier builds of any model left, and the built-in prior for the TensorRT phase kinds
   * they lack (build-estimate.ts, withPrior), and where they came from (`phaseSharesSource`, as
   * `sharesSource` says). A heartbeat comes back with
   * the prediction at its moment: from earlier builds of this kind, or, for a first build, from
   * its own progress so far (`progress`, the view's fraction), once there is enough of it.
   */
  annotate(ev: BuildEvent, progress?: () => number): BuildEvent {
    const { profiles } = this.basisProfiles();
    this.recorder.apply(ev);
    this.shares.apply(ev);
    if (ev.type === 'build.started') {
      const phaseShares = this.learnedShares();
      return Object.keys(phaseShares).length ? { ...ev, phaseShares, ...(this.source ? { phaseSharesSource: this.source } : {}) } : ev;
    }
    if (ev.type !== 'heartbeat') return ev;
    const e = profiles.length ? estimateRemaining(profiles, this.recorder.latest, this.recorder.latestT, ev.t) : undefined;
    if (e) return { ...ev, estimate: { remainingMs: e.remainingMs, lowMs: e.lowMs, highMs: e.highMs, basis: e.basis, source: 'history' } };
    const p = progress && estimateFromProgress(progress(), ev.t);
    return p ? { ...ev, estimate: p } : ev;
  }

  /**
   * Where the phase shares of build.started came from: `prior` (no earlier build left any: the
   * percentage rests on the built-in prior alone), `mixed` or `history`. Undefined before
   * build.started.
   */
  get sharesSource(): SharesSource | undefined {
    return this.source;
  }

  /** The phase shares a build starts with: learned ones, the prior for kinds without history. */
  private learnedShares(): Record<string, number> {
    let learned: Record<string, number> = {};
    try {
      learned = mergeShares(this.store.allProfiles());
    } catch {
      // An unreadable profile store costs only the learned shares: the prior still holds.
    }
    const { shares, source } = withPrior(learned);
    this.source = source;
    return shares;
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
      profile.shares = this.shares.shares();
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
