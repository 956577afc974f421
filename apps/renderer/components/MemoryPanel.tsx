import { useApp } from '../hooks.js';
import { formatMemory } from '../../shared/memory-size.js';
import type { MemoryPoint } from '../../shared/memory-track.js';

const W = 260;
const H = 56;

/**
 * The build worker's memory: a small timeline of its host memory (RSS) and, where NVML gives it,
 * its GPU memory, sampled at the heartbeats, with the peaks and the limit the build runs under.
 * The peak per phase is a column of the phase tree.
 */
export function MemoryPanel() {
  const live = useApp((s) => s.live);
  useApp((s) => s.frame);
  const mem = live?.view.memory;
  // A device delta counts every process's allocations on the GPU since the build began.
  const gpuDelta = (live?.view.outcome?.memory?.peakGpuSource ?? live?.view.gpuDetail?.memorySource) === 'device-delta';
  const points = mem?.timeline ?? [];
  const options = live?.view.started?.options;
  const hostLimit = typeof options?.maxHostMemory === 'number' ? options.maxHostMemory : undefined;
  const estimate = live?.view.started?.memoryEstimate;
  return (
    <section className="panel memory" aria-label="Memory">
      <h2 aria-hidden="true">Memory</h2>
      {estimate && (
        <p className={`mem-estimate${estimate.warning ? ' warn' : ''}`} title={`Estimated from ${estimate.basis}`}>
          Expected peak about {formatMemory(estimate.peakHostBytes)} host
          {estimate.availableBytes !== undefined ? ` (${formatMemory(estimate.availableBytes)} available)` : ''}
          <span className="muted small-text"> — from {estimate.basis}</span>
          {estimate.warning && <strong className="mem-warning"> {estimate.warning}</strong>}
        </p>
      )}
      {points.length === 0 ? (
        <p className="muted">{live ? 'No memory figures yet (the worker reports them once a second).' : 'The build worker’s memory shows here while a build runs.'}</p>
      ) : (
        <>
          <Sparkline points={points} limit={hostLimit} />
          <dl className="kv">
            <dt>Peak host</dt>
            <dd className="num">{formatMemory(mem!.peakHostBytes)}</dd>
            <dt>Peak GPU</dt>
            <dd className="num">
              {mem!.peakGpuBytes === null
                ? 'not measured (no NVML, or simulated)'
                : `${formatMemory(mem!.peakGpuBytes)}${gpuDelta ? ' (device delta: every process on the GPU)' : ''}`}
            </dd>
            {options?.maxHostMemory !== undefined && (
              <>
                <dt>Host limit</dt>
                <dd className="num">{hostLimit !== undefined ? formatMemory(hostLimit) : '90 % of what the worker may use'}</dd>
              </>
            )}
            {options?.maxGpuMemory !== undefined && (
              <>
                <dt>GPU limit</dt>
                <dd className="num">{formatMemory(options.maxGpuMemory)}</dd>
              </>
            )}
          </dl>
        </>
      )}
    </section>
  );
}

/** Host memory (and GPU memory, dashed) over build time; the host limit as a line when set. */
export function Sparkline({ points, limit }: { points: MemoryPoint[]; limit?: number }) {
  const t0 = points[0][0];
  const t1 = Math.max(t0 + 1, points[points.length - 1][0]);
  let top = limit ?? 0;
  for (const [, h, g] of points) top = Math.max(top, h, g ?? 0);
  top = Math.max(1, top * 1.05);
  const x = (t: number) => ((t - t0) / (t1 - t0)) * W;
  const y = (b: number) => H - (b / top) * H;
  const line = (pick: (p: MemoryPoint) => number | null) =>
    points
      .filter((p) => pick(p) !== null)
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p[0]).toFixed(1)},${y(pick(p)!).toFixed(1)}`)
      .join(' ');
  const gpu = line((p) => p[2]);
  const last = points[points.length - 1];
  return (
    <svg className="mem-spark" viewBox={`0 0 ${W} ${H}`} width="100%" height={H} role="img" aria-label={`host memory now ${formatMemory(last[1])}`}>
      {limit !== undefined && <line className="mem-limit" x1={0} x2={W} y1={y(limit)} y2={y(limit)} />}
      <path className="mem-host" d={line((p) => p[1])} />
      {gpu && <path className="mem-gpu" d={gpu} />}
    </svg>
  );
}
