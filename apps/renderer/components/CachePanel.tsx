import { useApp } from '../hooks.js';
import { formatBytes } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { stoppedMidTimingNote } from '../../shared/view-format.js';

/**
 * Timing-cache figures as the backend reports them. TensorRT has no hit/miss API, so hits and
 * misses appear only when known, and inferred misses say so.
 */
export function CachePanel() {
  const live = useApp((s) => s.live);
  const cache = useApp((s) => s.live?.cache);
  useApp((s) => !!s.live?.outcome);
  return (
    <section className="panel cache" aria-label="Timing cache">
      <h2 aria-hidden="true">Timing cache</h2>
      {!cache && (
        <p className="muted">
          {!live ? 'Set a timing-cache file to reuse tactic timings between builds.' : live.outcome ? 'This build used no timing-cache file.' : 'No timing-cache figures yet.'}
        </p>
      )}
      {cache && (
        <>
          <dl className="kv">
            <dt>Entries before</dt>
            <dd className="num">{fmtCount(cache.entriesBefore)}</dd>
            <dt>Entries after</dt>
            <dd className="num">{fmtCount(cache.entriesAfter)}</dd>
            <dt>Added</dt>
            <dd className="num">{fmtCount(cache.added)}</dd>
            <dt>Size</dt>
            <dd className="num">{formatBytes(cache.bytes)}</dd>
            <dt>Hits</dt>
            <dd className="num">{cache.hits === undefined ? 'unknown' : fmtCount(cache.hits)}</dd>
            <dt>Misses</dt>
            <dd className="num">
              {cache.misses === undefined ? 'unknown' : fmtCount(cache.misses)}
              {cache.misses !== undefined && cache.missesInferred && (
                <span className="tag" title="Counted from log lines, not measured by TensorRT">
                  {' '}
                  inferred
                </span>
              )}
            </dd>
            {cache.path && (
              <>
                <dt>File</dt>
                <dd className="path" title={cache.path}>
                  {cache.path}
                </dd>
              </>
            )}
          </dl>
          {stoppedMidTimingNote(cache) && <p className="hint">{stoppedMidTimingNote(cache)}.</p>}
          {cache.warning && (
            <p className="warning" role="note">
              ⚠ {cache.warning}
            </p>
          )}
        </>
      )}
    </section>
  );
}
