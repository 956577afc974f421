import type { BuildFinished, CacheStats, CancelReason } from '../../shared/protocol.js';
import { useState } from 'react';
import { useApp, useController } from '../hooks.js';
import { splitForMiddleEllipsis } from '../../shared/file-names.js';
import { formatBytes, formatDuration, formatLatency } from '../../shared/format.js';
import { formatMemory } from '../../shared/memory-size.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { buildLayersText } from '../../shared/build-layers.js';

/**
 * What a finished build comes down to, in one place above its tree: how it ended, how long it
 * took, what it produced (or why nothing), and what the timing cache gained. A finished tree on
 * its own reads as "unfinished" (TensorRT ends many phases before their last step).
 */
export function BuildSummary() {
  const live = useApp((s) => s.live);
  useApp((s) => s.frame);
  const o = live?.outcome;
  if (!live || !o) return null;
  const facts = summaryFacts(o, live.cache, live.phases.callbacks, live.view.cancelling?.reason);
  return (
    <div className={`summary summary-${o.status}`} role="group" aria-label="Build summary">
      <strong className="summary-state">{headline(o, live.view.cancelling?.reason)}</strong>
      {facts.map((f) => (
        <span key={f} className="summary-fact" title={f.startsWith('engine ') && o.engineBytes !== undefined ? `${fmtCount(o.engineBytes)} bytes` : undefined}>
          {f}
        </span>
      ))}
      {o.status === 'succeeded' && live.outputPath && <EnginePath id={live.id} path={live.outputPath} />}
      {o.layers && (
        <p className={`summary-layers${o.layers.wider ? ' summary-layers-wider' : ''}`} title={o.layers.widerNames?.join('\n')}>
          {buildLayersText(o.layers)}
        </p>
      )}
      {o.error && <p className="summary-error">{o.error}</p>}
    </div>
  );
}

/**
 * Where the engine is, on its own line: the path with its middle cut when it is too long (its
 * head and the file name stay), Copy, and (desktop) Show in folder.
 */
function EnginePath({ id, path }: { id: string; path: string }) {
  const c = useController();
  const [note, setNote] = useState<string | null>(null);
  const { head, tail } = splitForMiddleEllipsis(path, 28);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(path);
      setNote('Copied');
    } catch {
      setNote('Copy failed: select the path instead');
    }
    setTimeout(() => setNote(null), 1500);
  };
  const show = c.client.showBuildFile?.bind(c.client);
  return (
    <div className="summary-path" role="group" aria-label="Engine file">
      <span className="muted">at</span>
      <code className="path-text" title={path}>
        {head && <span className="path-head">{head}</span>}
        <span className="path-tail">{tail}</span>
      </code>
      <button type="button" className="small" onClick={() => void copy()}>
        {note ?? 'Copy path'}
      </button>
      {show && (
        <button
          type="button"
          className="small"
          onClick={() => show(id, 'engine').catch((e: Error) => c.store.setState({ notice: { kind: 'error', text: `Show in folder failed: ${e.message}` } }))}
        >
          Show in folder
        </button>
      )}
    </div>
  );
}

/** Why a cancel happened, when it was not the user's Stop. */
const CANCEL_CAUSE: Partial<Record<CancelReason, string>> = {
  timeout: 'the time budget ran out',
  shutdown: 'the service shut down',
  memory: 'it passed its memory limit',
};

function headline(o: BuildFinished, reason?: CancelReason): string {
  const d = formatDuration(o.durationMs);
  switch (o.status) {
    case 'succeeded':
      return `Succeeded in ${d}`;
    case 'cancelled':
      return reason && CANCEL_CAUSE[reason] ? `Cancelled after ${d}: ${CANCEL_CAUSE[reason]}` : `Cancelled after ${d}`;
    case 'failed':
      return `Failed after ${d}`;
    case 'crashed':
      return `Crashed after ${d}`;
  }
}

/** The facts worth a glance, in reading order; exported for tests. */
export function summaryFacts(o: BuildFinished, cache: CacheStats | undefined, callbacks: number, reason?: CancelReason): string[] {
  const out: string[] = [];
  if (o.status === 'succeeded') {
    out.push(o.engineBytes !== undefined ? `engine ${formatBytes(o.engineBytes)}` : 'engine written');
  } else {
    out.push('no engine written');
  }
  const stop = reason === 'timeout' ? 'the time budget ran out' : reason === 'shutdown' ? 'the shutdown' : reason === 'memory' ? 'the memory limit' : 'Stop';
  if (o.cancelLatencyMs !== undefined) out.push(`builder stopped ${formatLatency(o.cancelLatencyMs)} after ${stop}`);
  if (o.stopToFinishMs !== undefined) out.push(`unwound in ${formatLatency(o.stopToFinishMs)}`);
  if (callbacks > 0) out.push(`${fmtCount(callbacks)} TensorRT callbacks`);
  if (o.memory) {
    out.push(`peak host memory ${formatMemory(o.memory.peakHostBytes)}${o.memory.peakGpuBytes !== null ? `, GPU ${formatMemory(o.memory.peakGpuBytes)}` : ''}`);
  }
  const c = o.cache ?? cache;
  if (c && c.entriesAfter >= 0) {
    const kept = o.status !== 'succeeded' && c.savedAfterCancel ? ' kept' : '';
    out.push(`timing cache +${fmtCount(Math.max(0, c.added))}${kept} (${fmtCount(c.entriesAfter)} entries)`);
    if (c.deferredPath) out.push('cache entries saved beside the locked cache file');
  }
  return out;
}
