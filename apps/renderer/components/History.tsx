import type { BuildRecord } from '../../shared/protocol.js';
import { useApp, useController } from '../hooks.js';
import { fmtCount, fmtMs } from '../lib/format.js';
import { recordDurationMs } from '../store/controller.js';

/** This session's builds, newest first; picking one shows its tree and figures. */
export function History() {
  const c = useController();
  const history = useApp((s) => s.history);
  const live = useApp((s) => s.live);
  const names = useApp((s) => s.modelNames);
  const rows = [...history].reverse();
  return (
    <section className="panel history" aria-labelledby="hist-h">
      <h2 id="hist-h">History</h2>
      {rows.length === 0 && <p className="muted">No builds in this session yet.</p>}
      {rows.length > 0 && (
        <table className="hist">
          <colgroup>
            <col />
            <col className="c-outcome" />
            <col className="c-time" />
            <col className="c-cache" />
          </colgroup>
          <thead>
            <tr>
              <th>Model</th>
              <th>Outcome</th>
              <th className="num">Time</th>
              <th className="num" title="timing-cache hits / entries added">Cache</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.id}
                className={r.id === live?.id ? 'current' : undefined}
                tabIndex={0}
                onClick={() => c.watch(r.id)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') c.watch(r.id);
                }}
                aria-label={`Build ${r.id}: ${outcome(r)}`}
              >
                <td className="path" title={`${names[r.modelPath] ?? r.model?.fileName ?? base(r.modelPath)}\n${r.modelPath}`}>
                  {names[r.modelPath] ?? r.model?.fileName ?? base(r.modelPath)}
                  {r.simulated && <span className="tag">sim</span>}
                </td>
                <td className={`outcome o-${r.state}`}>{outcome(r)}</td>
                <td className="num">{fmtDuration(r)}</td>
                <td className="num">{cacheText(r)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function outcome(r: BuildRecord): string {
  return r.state;
}

function fmtDuration(r: BuildRecord): string {
  const d = recordDurationMs(r);
  return d === undefined ? '…' : fmtMs(d);
}

function cacheText(r: BuildRecord): string {
  const cache = r.cache ?? r.outcome?.cache;
  if (!cache) return '—';
  const hits = cache.hits === undefined ? '?' : fmtCount(cache.hits);
  return `${hits} / +${fmtCount(cache.added)}`;
}

function base(p: string): string {
  return p.split(/[\\/]/).pop() ?? p;
}
