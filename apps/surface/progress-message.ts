// The human line of an MCP progress notification (and of an LSP work-done report): where the
// builder is, how long TensorRT has been silent and whether it is working meanwhile, and the
// predicted end when earlier builds give one. Everything comes from the shared build view
// (apps/shared/build-view.ts); the caller passes the wall clock in, so tests need no timers.
import { isFinalStatus, type BuildView } from '../shared/build-view.js';
import { formatDuration } from '../shared/format.js';
import { displayMessage } from '../shared/display-text.js';
import type { CancelReason } from '../shared/protocol.js';
import { crashSite, formatCrashSite, formatCurrentPath, formatLiveness, formatRemaining, livenessOf, memoryProgressNote } from '../shared/view-format.js';

const REASON_WORDS: Record<CancelReason, string> = {
  user: 'cancel requested',
  timeout: 'time budget exhausted',
  shutdown: 'server shutting down',
  memory: 'memory limit passed',
};

export interface MessageOptions {
  /** Silence longer than this is called out as "still building". */
  silentAfterMs?: number;
  /** Wall time (ms) the build entered the queue, for "queued for N s". */
  queuedAtWall?: number;
  /**
   * Another build is ahead of this one (the service runs a fixed number at once): only then does
   * a queued build say it waits for one. Otherwise "queued" is the moment the worker starts.
   */
  waitingBehind?: boolean;
}

/** Where the builder is: the current path with step counts, or what happens before the first phase. */
export function whereText(view: BuildView): string {
  const path = view.currentPath();
  return path.length > 0 ? formatCurrentPath(path) : 'preparing the build (parsing the model)';
}

/** The line as clients show it: names from the model are escaped by view-format; any other text (an error) and long values are made safe here too. */
export function progressMessage(view: BuildView, nowWall: number, opts: MessageOptions = {}): string {
  return displayMessage(progressLine(view, nowWall, opts));
}

function progressLine(view: BuildView, nowWall: number, opts: MessageOptions): string {
  const silentAfterMs = opts.silentAfterMs ?? 2000;
  if (view.status === 'queued') {
    const q = opts.queuedAtWall;
    const waited = q === undefined || Number.isNaN(q) ? '' : ` for ${formatDuration(nowWall - q)}`;
    return opts.waitingBehind ? `queued${waited}: waiting for an earlier build to finish` : 'starting the build worker';
  }
  if (isFinalStatus(view.status)) {
    const site = crashSite(view.outcome);
    return `build ${view.status}${site ? `, ${formatCrashSite(site)}` : ''}`;
  }
  const where = whereText(view);
  const quiet = view.sinceLastCallbackMs(nowWall);
  const silent = quiet !== undefined && quiet >= silentAfterMs;
  let since = quiet === undefined ? `no TensorRT callback yet, ${formatDuration(view.elapsedMs(nowWall))} since start` : `last TensorRT callback ${formatDuration(quiet)} ago`;
  // In a silent stretch, say whether the builder burns CPU (working) or not (stalled).
  const live = silent ? formatLiveness(livenessOf(view)) : undefined;
  if (live) since += ` (${live})`;
  if (view.status === 'cancelling') {
    return `stopping (${REASON_WORDS[view.cancelling?.reason ?? 'user']}), waiting for the next step boundary: ${where} · ${since}`;
  }
  const left = view.remaining(nowWall);
  const memory = memoryProgressNote(view);
  return `${silent ? 'still building: ' : ''}${where} · ${since}${left ? ` · ${formatRemaining(left, view.phaseSharesSource)}` : ''}${memory ? ` · ${memory}` : ''}`;
}
