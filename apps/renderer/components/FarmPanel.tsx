import { useEffect, useState } from 'react';
import type { FarmStatus } from '../../shared/farm-status.js';
import { useController } from '../hooks.js';

const labels = (l: Record<string, string>) =>
  Object.entries(l)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ') || 'any worker';

/**
 * The build farm at a glance, on a `serve --queue` only: the live workers (labels, busy slots,
 * last heartbeat), the queued builds and why each waits, and the most recent endings. The same
 * facts as `trt-build-studio farm status`, kept current by the service's farm stream
 * (GET /api/farm/events). Hidden where the service builds locally, and in the desktop app, whose
 * builds run on its own machine (docs/farm.md, "Seeing the farm").
 */
export function FarmPanel() {
  const client = useController().client;
  const [status, setStatus] = useState<FarmStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [absent, setAbsent] = useState(typeof client.subscribeFarm !== 'function' && typeof client.farmStatus !== 'function');

  useEffect(() => {
    if (absent) return;
    if (client.subscribeFarm) {
      // Live: the status now and at every change, pushed by the service (no polling here).
      return client.subscribeFarm({
        onStatus: (s) => {
          if (s === null) return setAbsent(true);
          setStatus(s);
          setError(null);
        },
        onError: (e) => setError(e.message),
      });
    }
    // A host with the one-shot read only: the status as it was when the panel opened.
    let stopped = false;
    client.farmStatus!().then(
      (s) => {
        if (stopped) return;
        if (s === null) setAbsent(true);
        else setStatus(s);
      },
      (e: Error) => !stopped && setError(e.message),
    );
    return () => {
      stopped = true;
    };
  }, [client, absent]);

  if (absent) return null;
  const busy = status?.workers.reduce((n, w) => n + w.running.length, 0) ?? 0;
  const slots = status?.workers.reduce((n, w) => n + w.slots, 0) ?? 0;
  const queued = status?.pools.flatMap((p) => p.queued.map((q) => ({ ...q, target: p.target }))) ?? [];
  return (
    <section className="panel farm" aria-labelledby="farm-h">
      <h2 id="farm-h">Build farm</h2>
      {error && <p className="error">Farm: {error}</p>}
      {!status && !error && <p className="muted">Reading the farm…</p>}
      {status && (
        <>
          <p className="farm-summary">
            {status.workers.length} worker{status.workers.length === 1 ? '' : 's'} · {busy} of {slots} slot{slots === 1 ? '' : 's'} busy · {queued.length} queued
          </p>
          {status.workers.length === 0 && <p className="muted">No live worker: queued builds wait until one joins.</p>}
          <ul className="farm-workers" aria-label="Workers">
            {status.workers.map((w) => (
              <li key={w.id} title={`${w.host}, pid ${w.pid}${w.running.length ? `; running ${w.running.join(', ')}` : ''}`}>
                <span className="farm-worker-id">{w.id}</span> <span className="muted">{labels(w.labels)}</span>{' '}
                <span className={w.running.length ? 'farm-busy' : 'muted'}>
                  {w.running.length}/{w.slots} busy
                </span>
                {w.lastHeartbeatMsAgo !== null && <span className="muted"> · beat {(w.lastHeartbeatMsAgo / 1000).toFixed(1)} s ago</span>}
              </li>
            ))}
          </ul>
          {queued.length > 0 && (
            <ul className="farm-queued" aria-label="Queued builds">
              {queued.slice(0, 8).map((q) => (
                <li key={q.id} title={q.waiting}>
                  {q.id}{' '}
                  <span className="muted">
                    ({labels(q.target)}): {q.waiting}
                  </span>
                </li>
              ))}
              {queued.length > 8 && <li className="muted">… and {queued.length - 8} more</li>}
            </ul>
          )}
          {status.recent.length > 0 && (
            <p className="muted farm-recent">
              Recent:{' '}
              {status.recent
                .slice(0, 5)
                .map((r) => `${r.id} ${r.state}${r.worker ? ` on ${r.worker}` : ''}`)
                .join(' · ')}
            </p>
          )}
        </>
      )}
    </section>
  );
}
