import { useApp } from '../hooks.js';
import { fmtAgo, fmtCount, fmtMs } from '../lib/format.js';

/**
 * One line that always answers "is it alive?": the state word, elapsed time, and how long ago
 * TensorRT last called back — real builds go silent for minutes, and a frozen bar alone reads
 * as a hang.
 */
export function StatusLine() {
  const live = useApp((s) => s.live);
  const starting = useApp((s) => s.starting);
  const notice = useApp((s) => s.notice);
  useApp((s) => s.frame);
  const now = Date.now();
  const status = live ? live.status : 'Idle';
  const parts: string[] = [];
  if (live && status !== 'Idle') parts.push(`elapsed ${fmtMs(live.elapsedMs(now))}`);
  const since = live?.sinceLastCallbackMs(now);
  if (live && (status === 'Building' || status === 'Stopping') && since !== undefined) {
    parts.push(`last TensorRT callback ${fmtAgo(since)} ago`);
  }
  let detail = '';
  const o = live?.outcome;
  if (status === 'Stopping') {
    detail = live?.forceRequested
      ? 'Stopping — ending the build worker…'
      : 'Stopping — waiting for the builder to reach a step boundary… (Stop again to kill it)';
  }
  else if (o && (o.status === 'cancelled' || o.cancelLatencyMs !== undefined)) {
    const bits: string[] = [];
    if (o.cancelLatencyMs !== undefined) bits.push(`builder stopped ${fmtMs(o.cancelLatencyMs)} after Stop`);
    if (o.stopToFinishMs !== undefined) bits.push(`unwound in ${fmtMs(o.stopToFinishMs)}`);
    if (bits.length) detail = bits.join(', ');
  }
  if (o?.error) detail = detail ? `${detail} — ${o.error}` : o.error;
  if (o?.status === 'succeeded' && o.engineBytes !== undefined) detail = `engine ${fmtCount(o.engineBytes)} bytes`;

  return (
    <footer className="statusbar">
      <div role="status" className={`status status-${status.toLowerCase()}`} aria-live="polite">
        <span className="state">{starting && status === 'Idle' ? 'Idle (starting…)' : status}</span>
        {parts.map((p) => (
          // Ticking figures: readable in the region, but not announced four times a second.
          <span key={p.split(' ')[0]} className="part" aria-live="off">
            {p}
          </span>
        ))}
        {detail && <span className="detail">{detail}</span>}
      </div>
      {notice && (
        <div className={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : undefined}>
          {notice.text}
        </div>
      )}
    </footer>
  );
}
