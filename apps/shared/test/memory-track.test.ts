// The build view's memory (memory-track.ts through build-view.ts): heartbeat samples raise the
// peak of every open phase row, the summary names rows by path in tree order, the timeline stays
// bounded, and a view rebuilt from its snapshot answers the same.
import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import { BuildViewSnapshot } from '../build-view-schema.js';
import { MEMORY_TIMELINE_POINTS, mergeMemory } from '../memory-track.js';
import type { BuildEvent } from '../protocol.js';

const GiB = 1024 ** 3;
let seq = 0;
const base = (t: number) => ({ v: 1 as const, buildId: 'b', seq: ++seq, t });
const start = (t: number, id: number, parentId: number | null, name: string): BuildEvent => ({ ...base(t), type: 'phase.start', id, parentId, name, nbSteps: 2, instance: 0 });
const finish = (t: number, id: number): BuildEvent => ({ ...base(t), type: 'phase.finish', id, stepsDone: 2, early: false });
const beat = (t: number, host?: number, gpu?: number): BuildEvent => ({
  ...base(t),
  type: 'heartbeat',
  sinceLastCallbackMs: 0,
  cancelRequested: false,
  ...(host !== undefined ? { hostMemoryBytes: host } : {}),
  ...(gpu !== undefined ? { gpuMemoryBytes: gpu } : {}),
});

describe('memory in the build view', () => {
  it('keeps the peak per phase row, inclusive of children, and overall', () => {
    const v = new BuildView('b');
    expect(v.memorySummary()).toBeUndefined();
    for (const ev of [
      beat(5, 1 * GiB), // before any phase: overall only
      start(10, 1, null, 'Building engine'),
      start(20, 2, 1, 'Optimizing graph'),
      beat(30, 2 * GiB),
      beat(40, 3 * GiB),
      finish(50, 2),
      start(60, 3, 1, 'Timing tactics'),
      beat(70, 8 * GiB, 4 * GiB),
      beat(80, 6 * GiB, 5 * GiB),
      finish(90, 3),
      beat(95, 2 * GiB),
      finish(100, 1),
    ])
      v.apply(ev);
    expect(v.memorySummary()).toEqual({
      peakHostBytes: 8 * GiB,
      peakGpuBytes: 5 * GiB,
      byPhase: [
        { path: ['Building engine'], peakHostBytes: 8 * GiB, peakGpuBytes: 5 * GiB },
        { path: ['Building engine', 'Optimizing graph'], peakHostBytes: 3 * GiB, peakGpuBytes: null },
        { path: ['Building engine', 'Timing tactics'], peakHostBytes: 8 * GiB, peakGpuBytes: 5 * GiB },
      ],
    });
    expect(v.memory.timeline.map((p) => p[1])).toEqual([1, 2, 3, 8, 6, 2].map((g) => g * GiB));
  });

  it('has no GPU peak without a GPU figure, and nothing without samples', () => {
    const v = new BuildView('b');
    v.apply(start(1, 1, null, 'A'));
    v.apply(beat(2)); // a heartbeat without memory (an older worker)
    expect(v.memorySummary()).toBeUndefined();
    v.apply(beat(3, 100));
    expect(v.memorySummary()).toEqual({ peakHostBytes: 100, peakGpuBytes: null, byPhase: [{ path: ['A'], peakHostBytes: 100, peakGpuBytes: null }] });
  });

  it('bounds the timeline, keeping its ends', () => {
    const v = new BuildView('b');
    const n = MEMORY_TIMELINE_POINTS * 3;
    for (let i = 0; i < n; i++) v.apply(beat(i * 10, i));
    expect(v.memory.timeline.length).toBeLessThanOrEqual(MEMORY_TIMELINE_POINTS);
    expect(v.memory.timeline.length).toBeGreaterThan(MEMORY_TIMELINE_POINTS / 4);
    expect(v.memory.timeline[v.memory.timeline.length - 1][1]).toBe(n - 1);
    expect(v.memorySummary()?.peakHostBytes).toBe(n - 1);
  });

  it('survives a snapshot: the rebuilt view has the same peaks and goes on from them', () => {
    const v = new BuildView('b');
    for (const ev of [start(1, 1, null, 'A'), start(2, 2, 1, 'B'), beat(3, 500, 7)]) v.apply(ev);
    const snap = BuildViewSnapshot.parse(JSON.parse(JSON.stringify(v.snapshot())));
    const w = BuildView.fromSnapshot(snap);
    expect(w.memorySummary()).toEqual(v.memorySummary());
    const more = beat(4, 900);
    v.apply(more);
    w.apply(more);
    expect(w.memorySummary()).toEqual(v.memorySummary());
    expect(w.memorySummary()?.byPhase.map((p) => p.peakHostBytes)).toEqual([900, 900]);
  });

  it('merges the worker’s own peak (VmHWM) into the sampled one', () => {
    const sampled = { peakHostBytes: 10, peakGpuBytes: null, byPhase: [{ path: ['A'], peakHostBytes: 10, peakGpuBytes: null }] };
    expect(mergeMemory(sampled, { peakHostBytes: 25, peakGpuBytes: 3, byPhase: [] })).toEqual({ ...sampled, peakHostBytes: 25, peakGpuBytes: 3 });
    expect(mergeMemory(undefined, { peakHostBytes: 25, peakGpuBytes: null, byPhase: [] })?.peakHostBytes).toBe(25);
    expect(mergeMemory(sampled, undefined)).toBe(sampled);
  });
});
