import { useEffect, useState } from 'react';
import { useApp, useController } from '../hooks.js';
import { formatAgo, formatBytes, formatDuration, formatLatency } from '../../shared/format.js';
import { shortOutcomeText } from '../lib/outcome-text.js';
import { busyWord, formatCores, gpuMemoryText, IDLE_CORES, LONG_SILENCE_MS, PRIOR_WEIGHTS_NOTE, shownLiveness, type Liveness } from '../../shared/view-format.js';
import { fmtCount, fmtRemaining } from '../lib/panel-numbers.js';
import { modelErrorParts, pageStatus } from '../lib/model-error.js';

/**
 * One line that always answers "is it alive?": the state word, elapsed time, the predicted end
 * (when earlier builds give one), how long ago TensorRT last called back and whether the builder
 * is using CPU or GPU meanwhile — real builds go silent for minutes, and a frozen bar alone reads
 * as a hang.
 */
export function StatusLine() {
  const live = useApp((s) => s.live);
  const starting = useApp((s) => s.starting);
  const notice = useApp((s) => s.notice);
  useApp((s) => s.frame);
  const [showFull, setShowFull] = useState(false);
  const liveId = live?.id;
  // A new build's status starts with its message folded again.
  useEffect(() => setShowFull(false), [liveId]);
  const now = Date.now();
  const status = live ? live.status : 'Idle';
  const running = status === 'Building' || status === 'Stopping';
  const parts: string[] = [];
  const percent = live && status !== 'Idle' ? overallPercent(live.view.fraction(), status) : undefined;
  // No earlier build left phase weights: the percentage rests on the built-in prior, and says so.
  const priorWeights = live?.view.phaseSharesSource === 'prior';
  if (percent !== undefined && running) parts.push(`${percent}%`);
  if (live && status !== 'Idle') parts.push(`elapsed ${formatDuration(live.elapsedMs(now))}`);
  const modelName = useApp((s) => s.model?.displayName);
  // A refused model while no build is on screen: the line says so, not "Idle".
  const modelError = useApp((s) => s.modelError);
  const shown = pageStatus(status, modelError);
  // The window title carries the state and the overall percentage (a minimized window's tab or
  // task bar entry still shows how far it is).
  const title = windowTitle(shown, running ? percent : undefined, modelName);
  useEffect(() => {
    document.title = title;
  }, [title]);
  const estimate = live && running ? live.view.remaining(now) : undefined;
  if (estimate) parts.push(fmtRemaining(estimate));
  const since = live?.sinceLastCallbackMs(now);
  const silent = running && since !== undefined && since >= LONG_SILENCE_MS;
  const liveness = live && running ? shownLiveness(live.view, now) : undefined;
  const gpuNote = live && running ? live.view.gpuNote : undefined;
  let detail = '';
  const o = live?.outcome;
  if (status === 'Stopping') {
    detail = live?.forceRequested ? 'Stopping — ending the build worker…' : 'Stopping — waiting for the builder to reach a step boundary… (Stop again to kill it)';
  } else if (o && (o.status === 'cancelled' || o.cancelLatencyMs !== undefined)) {
    const bits: string[] = [];
    const reason = live?.view.cancelling?.reason;
    const after = reason === 'timeout' ? 'the time budget ran out' : reason === 'shutdown' ? 'the shutdown' : reason === 'memory' ? 'the memory limit' : 'Stop';
    if (o.cancelLatencyMs !== undefined) bits.push(`builder stopped ${formatLatency(o.cancelLatencyMs)} after ${after}`);
    if (o.stopToFinishMs !== undefined) bits.push(`unwound in ${formatLatency(o.stopToFinishMs)}`);
    if (bits.length) detail = bits.join(', ');
  }
  // The error's short form here; its full text is a click away (and in the summary and the log).
  const short = o ? shortOutcomeText(o) : undefined;
  const full = o?.error && short !== o.error ? o.error : undefined;
  if (short) detail = detail ? `${detail} — ${short}` : short;
  let detailTitle: string | undefined;
  // Idle with a model whose form cannot build yet: say so here too (Build is disabled).
  const model = useApp((s) => s.model);
  useApp((s) => s.form);
  const c = useController();
  if (status === 'Idle' && model && !starting) {
    const blocker = c.buildBlocker();
    if (blocker) detail = `not ready to build: ${blocker}`;
  }
  if (shown === 'Model refused' && modelError) detail = modelErrorParts(modelError).head;
  if (o?.status === 'succeeded' && o.engineBytes !== undefined) {
    detail = `engine ${formatBytes(o.engineBytes)}`;
    detailTitle = `${fmtCount(o.engineBytes)} bytes`;
  }

  return (
    <footer className="statusbar">
      <div role="status" className={`status status-${shown.toLowerCase().replace(/ /g, '-')}`} aria-live="polite">
        <span className="state">{starting && shown === 'Idle' ? 'Idle (starting…)' : shown}</span>
        {parts.map((p) => (
          // Ticking figures: readable in the region, but not announced four times a second.
          <span
            key={PERCENT_PART.test(p) ? 'percent' : p.split(' ')[0]}
            className="part"
            aria-live="off"
            title={p.startsWith('about') ? estimateTitle(estimate) : PERCENT_PART.test(p) ? PERCENT_TITLE + (priorWeights ? PRIOR_WEIGHTS_TITLE : '') : undefined}
          >
            {p}
            {priorWeights && PERCENT_PART.test(p) && <span className="muted"> ({PRIOR_WEIGHTS_NOTE})</span>}
          </span>
        ))}
        {running && since !== undefined && (
          <span className={`part liveness${silent ? ' silent' : ''}`} aria-live="off">
            {silent && (
              <span className="silent-mark" aria-hidden="true">
                ⚠{' '}
              </span>
            )}
            last TensorRT callback {formatAgo(since)} ago
            {silent && <span className="visually-hidden"> (a long silence)</span>}
            {liveness && (
              <span className={liveness.busy ? 'cpu busy' : 'cpu idle'} title={gpuNote}>
                {' · '}
                {livenessText(liveness)}
              </span>
            )}
          </span>
        )}
        {detail && !full && (
          <span className="detail" title={detailTitle}>
            {detail}
          </span>
        )}
        {detail && full && (
          <button type="button" className="detail linkish" aria-expanded={showFull} title="Show the full message" onClick={() => setShowFull(!showFull)}>
            {detail}
          </button>
        )}
      </div>
      {full && showFull && (
        <div className="status-full" role="region" aria-label="Full message">
          <p>{full}</p>
          <button type="button" className="small" onClick={() => setShowFull(false)}>
            Close
          </button>
        </div>
      )}
      {notice && (
        <div className={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : undefined}>
          {notice.text}
        </div>
      )}
    </footer>
  );
}

const PERCENT_TITLE =
  "Overall progress, as every surface reports it: the outermost phase's steps, refined by the phase running inside it. TensorRT gives no total, so it is a shape, not a promise; it stays under 100 until the engine is written.";
const PRIOR_WEIGHTS_TITLE =
  ' No earlier build has been timed here yet, so each phase counts with the share typical TensorRT builds spend in it; once a build succeeds, the shares it measured take over.';
/** The status line's percentage part ("37%"), which says when it rests on typical phase weights. */
const PERCENT_PART = /^\d+%$/;

/** The build view's fraction as a whole percent; under 100 until the engine is written (as the LSP's). */
export function overallPercent(fraction: number, status: string): number {
  const p = Math.floor(Math.max(0, Math.min(1, fraction)) * 100);
  return status === 'Succeeded' ? 100 : Math.min(99, p);
}

const APP_NAME = 'TRT Build Studio';

/** "37% · Building · resnet50.onnx — TRT Build Studio"; the app's name alone while idle without a model. */
export function windowTitle(status: string, percent: number | undefined, model: string | undefined): string {
  const head = [percent !== undefined ? `${percent}%` : undefined, status !== 'Idle' ? status : undefined, model].filter((p) => p !== undefined);
  return head.length ? `${head.join(' · ')} — ${APP_NAME}` : APP_NAME;
}

/** "builder busy · 1.6 cores · GPU 87%", or what an idle builder may be doing. */
function livenessText(l: Liveness): string {
  if (!l.busy) return l.gpuPercent === undefined ? 'no CPU use — waiting on the GPU or stalled' : 'no CPU or GPU use — the builder looks stalled';
  const parts = [busyWord(l)];
  if (l.cores !== undefined) parts.push(l.cores >= IDLE_CORES ? formatCores(l.cores) : 'CPU idle');
  if (l.gpuPercent !== undefined) parts.push(`GPU ${Math.round(l.gpuPercent)}%${gpuMemoryText(l)}`);
  return parts.join(' · ');
}

function estimateTitle(e: { basis: number; source?: string } | undefined): string | undefined {
  if (e === undefined) return undefined;
  if (e.source === 'progress')
    return 'No earlier build of this model with these options: extrapolated from this build’s own progress so far. A rough estimate; the range narrows as the build goes.';
  const basis = e.basis;
  return `Predicted from ${basis} earlier build${basis === 1 ? '' : 's'} of this model with the same options and backend; the range is their spread.`;
}
