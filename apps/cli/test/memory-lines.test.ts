// Memory in the terminal and in progress lines: the tree shows each phase's peak beside it, the
// closing summary lists the peaks per phase, the liveness line adds the build's GPU memory, and
// MCP/LSP progress lines mention memory only when it is large or near the build's limit.
import { describe, expect, it } from 'vitest';
import { progressMessage } from '../../surface/progress-message.js';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { formatLiveness, livenessOf } from '../../shared/view-format.js';
import { memoryLines, summaryLines } from '../render/summary.js';
import { treeLines } from '../render/tree-view.js';

const GiB = 2 ** 30;
let seq = 0;
const base = (t: number) => ({ v: 1 as const, buildId: 'b', seq: ++seq, t });
const start = (t: number, id: number, parentId: number | null, name: string): BuildEvent => ({ ...base(t), type: 'phase.start', id, parentId, name, nbSteps: 4, instance: 0 });
const beat = (t: number, extra: Record<string, number>): BuildEvent => ({ ...base(t), type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, ...extra });

function building(options: Record<string, unknown> = {}): BuildView {
  const v = new BuildView('b');
  v.apply({ ...base(0), type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, options: { backend: 'simulated', ...options } });
  v.apply(start(1, 1, null, 'Building engine'));
  v.apply(start(2, 2, 1, 'Timing tactics'));
  return v;
}

describe('memory lines', () => {
  it('the tree shows the peak beside each phase a sample fell in', () => {
    const v = building();
    v.apply(beat(1000, { hostMemoryBytes: 3 * GiB }));
    v.apply(beat(2000, { hostMemoryBytes: 2 * GiB, gpuMemoryBytes: 5 * GiB }));
    const lines = treeLines(v, 2500).map((l) => l.text);
    expect(lines[0]).toMatch(/Building engine .*· peak 3 GiB \/ GPU 5 GiB$/);
    expect(lines[1]).toMatch(/Timing tactics .*· peak 3 GiB \/ GPU 5 GiB$/);
    expect(treeLines(building(), 10).every((l) => !l.text.includes('peak'))).toBe(true);
  });

  it('the summary lists the peaks per phase, bounded', () => {
    const byPhase = Array.from({ length: 20 }, (_, i) => ({ path: ['Building engine', `Phase ${i}`], peakHostBytes: (i + 1) * GiB, peakGpuBytes: null }));
    const lines = memoryLines({ peakHostBytes: 20 * GiB, peakGpuBytes: null, byPhase: [{ path: ['Building engine'], peakHostBytes: 20 * GiB, peakGpuBytes: null }, ...byPhase] });
    expect(lines[0]).toBe('Memory: peak 20 GiB host');
    expect(lines[1]).toBe('  Building engine: 20 GiB');
    expect(lines[2]).toBe('    Phase 0: 1 GiB');
    expect(lines).toHaveLength(1 + 12 + 1);
    expect(lines[lines.length - 1]).toMatch(/9 more phases/);
    const fin = summaryLines({ ...base(5), type: 'build.finished', status: 'succeeded', durationMs: 5, memory: { peakHostBytes: GiB, peakGpuBytes: 2 * GiB, byPhase: [] } }, true);
    expect(fin).toContain('Memory: peak 1 GiB host, 2 GiB GPU');
  });

  it('the liveness line adds the build’s GPU memory where NVML gave it', () => {
    const v = building();
    v.apply(beat(1000, { workerCpuMs: 0 }));
    v.apply(beat(2000, { workerCpuMs: 2000, gpuUtilPercent: 94, gpuMemoryBytes: 31 * GiB }));
    expect(formatLiveness(livenessOf(v))).toBe('builder busy, 2.0 cores, GPU 94% · 31 GiB');
  });

  it('progress lines mention memory when it is large or near the limit, and not otherwise', () => {
    const small = building();
    small.apply(beat(1000, { hostMemoryBytes: 2 * GiB }));
    expect(progressMessage(small, Date.now())).not.toMatch(/memory/);
    const large = building();
    large.apply(beat(1000, { hostMemoryBytes: 21.5 * GiB }));
    expect(progressMessage(large, Date.now())).toMatch(/ · host memory 21.5 GiB$/);
    const near = building({ maxHostMemory: 4 * GiB, maxGpuMemory: 8 * GiB });
    near.apply(beat(1000, { hostMemoryBytes: 3.5 * GiB, gpuMemoryBytes: 7 * GiB }));
    expect(progressMessage(near, Date.now())).toMatch(/ · host memory 3.5 GiB of the 4 GiB limit, GPU memory 7 GiB of the 8 GiB limit$/);
  });
});
