// What the desktop shell shows about builds outside the page: the taskbar/dock progress bar, the
// Stop menu item's enabled state, and a system notification when a build ends while the user is
// looking at another window (long builds are exactly when they will be). Each build is followed
// through its own build view (apps/shared/build-view.ts): the bar is the view's fraction, the
// same rising figure the other surfaces show.
import path from 'node:path';
import type { BuildServiceApi } from '../service/api.js';
import { formatDuration } from '../shared/format.js';
import type { BuildEvent, BuildFinished } from '../shared/protocol.js';
import { crashSite, formatCrashSite } from '../shared/view-format.js';
import { followBuild, type LiveView } from '../shared/live-view.js';

export interface FeedbackWindow {
  isDestroyed(): boolean;
  isFocused(): boolean;
  setProgressBar(progress: number, options?: { mode: 'none' | 'normal' | 'indeterminate' | 'error' | 'paused' }): void;
}

export interface FeedbackDeps {
  service: Pick<BuildServiceApi, 'subscribe'>;
  window(): FeedbackWindow | null;
  notify(title: string, body: string): void;
  setStopEnabled(running: boolean): void;
  /** How often the bar may be redrawn; the OS needs no more than a few updates a second. */
  throttleMs?: number;
}

interface Tracked {
  modelName: string;
  /** The build followed (apps/shared/live-view.ts); null until followBuild returns. */
  live: LiveView | null;
  /** Cancelled because the app is quitting: the user knows, no notification. */
  stoppedByQuit: boolean;
}

/**
 * The smallest value shown while a build runs. Not Electron's indeterminate mode (a value > 1):
 * the Linux launcher API has no such state, so the bar would stay hidden until the first phase.
 */
const MIN_SHOWN = 0.01;
/** Electron: "< 0 removes it". */
const NONE = -1;

export class BuildFeedback {
  private readonly builds = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | null = null;
  private lastShown: number | null = NaN;

  constructor(private readonly deps: FeedbackDeps) {}

  track(buildId: string, modelPath: string): void {
    if (this.builds.has(buildId)) return;
    const tracked: Tracked = { modelName: path.basename(modelPath), live: null, stoppedByQuit: false };
    this.builds.set(buildId, tracked);
    // Snapshot first, each event once: events the subscription delivers before subscribe()
    // returns wait for the view.
    let live: LiveView;
    try {
      live = followBuild(this.deps.service, buildId, { onEvents: (events, _view, l) => this.onEvents(buildId, events, l) });
    } catch {
      // Unknown or already gone: nothing to show for it.
      this.builds.delete(buildId);
      return;
    }
    tracked.live = live;
    const outcome = live.record?.outcome;
    if (outcome) this.finish(buildId, outcome, live);
    else if (this.builds.has(buildId)) this.changed();
  }

  get activeCount(): number {
    return this.builds.size;
  }

  dispose(): void {
    for (const t of this.builds.values()) t.live?.unsubscribe();
    this.builds.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private onEvents(buildId: string, events: BuildEvent[], live: LiveView): void {
    const tracked = this.builds.get(buildId);
    if (!tracked) return;
    if (events.some((e) => e.type === 'build.cancelling' && e.reason === 'shutdown')) tracked.stoppedByQuit = true;
    const last = events[events.length - 1];
    if (last?.type === 'build.finished') this.finish(buildId, last, live);
    else this.changed();
  }

  private finish(buildId: string, outcome: BuildFinished, live: LiveView): void {
    const tracked = this.builds.get(buildId);
    if (!tracked) return;
    this.builds.delete(buildId);
    live.unsubscribe();
    this.render();
    if (outcome.status === 'cancelled' && tracked.stoppedByQuit) return;
    const win = this.deps.window();
    if (!win || win.isDestroyed() || !win.isFocused()) {
      this.deps.notify(titleOf(outcome), bodyOf(tracked.modelName, outcome));
    }
  }

  private changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.render();
    }, this.deps.throttleMs ?? 250);
  }

  /** Shows the most recently started build still running (builds queue one at a time anyway). */
  private render(): void {
    this.deps.setStopEnabled(this.builds.size > 0);
    const current = [...this.builds.values()].pop();
    const value = current ? Math.max(MIN_SHOWN, current.live?.view.fraction() ?? 0) : NONE;
    if (value === this.lastShown) return;
    const win = this.deps.window();
    if (!win || win.isDestroyed()) return;
    this.lastShown = value;
    win.setProgressBar(value, { mode: value === NONE ? 'none' : 'normal' });
  }
}

function titleOf(outcome: BuildFinished): string {
  switch (outcome.status) {
    case 'succeeded':
      return 'Build succeeded';
    case 'cancelled':
      return 'Build cancelled';
    case 'failed':
      return 'Build failed';
    case 'crashed':
      return 'Build crashed';
  }
}

function bodyOf(model: string, outcome: BuildFinished): string {
  const detail = outcome.error ? ` — ${outcome.error}` : '';
  const site = crashSite(outcome);
  return `${model} after ${formatDuration(outcome.durationMs)}${detail}${site ? ` (${formatCrashSite(site)})` : ''}`;
}
