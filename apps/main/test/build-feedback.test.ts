import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Subscription } from '../../service/api.js';
import type { BuildEvent, BuildRecord, EventBody } from '../../shared/protocol.js';
import { BuildFeedback, type FeedbackWindow } from '../build-feedback.js';
import { ProgressEstimate } from '../progress-estimate.js';

let seq = 0;
const ev = (body: EventBody): BuildEvent => ({ v: 1, buildId: 'b1', seq: seq++, t: seq, ...body }) as BuildEvent;
const start = (id: number, parentId: number | null, nbSteps: number) => ev({ type: 'phase.start', id, parentId, name: `p${id}`, nbSteps, instance: 0 });
const step = (id: number, stepsDone: number) => ev({ type: 'phase.step', id, step: stepsDone - 1, stepsDone });
const finish = (id: number, stepsDone: number, early = false) => ev({ type: 'phase.finish', id, stepsDone, early });
const done = (status: 'succeeded' | 'cancelled' | 'failed' | 'crashed', error?: string) =>
  ev({ type: 'build.finished', status, durationMs: 12_345, ...(error ? { error } : {}) });

describe('progress estimate', () => {
  it('is unknown before the first phase and follows the outermost phase, refined by its open child', () => {
    const p = new ProgressEstimate();
    expect(p.fraction()).toBeNull();
    p.apply([start(1, null, 4)]);
    expect(p.fraction()).toBe(0);
    p.apply([step(1, 1), start(2, 1, 10)]);
    expect(p.fraction()).toBeCloseTo(0.25);
    p.apply([step(2, 5)]);
    expect(p.fraction()).toBeCloseTo((1 + 0.5) / 4);
    p.apply([start(3, 2, 2), step(3, 1)]);
    expect(p.fraction()).toBeCloseTo((1 + (5 + 0.5) / 10) / 4);
    // A child that finishes early counts as done; the parent moves on.
    p.apply([finish(3, 1, true), finish(2, 7, true), step(1, 3)]);
    expect(p.fraction()).toBeCloseTo(0.75);
    p.apply([done('succeeded')]);
    expect(p.fraction()).toBe(1);
  });

  it('never leaves 0..1, even with steps beyond nbSteps or events for unknown phases', () => {
    const p = new ProgressEstimate();
    p.apply([step(9, 3), finish(9, 3), start(1, null, 2), step(1, 7)]);
    expect(p.fraction()).toBe(1);
  });

  it('forgets finished phases so a long build does not grow memory', () => {
    const p = new ProgressEstimate();
    p.apply([start(1, null, 1)]);
    for (let i = 2; i < 20_002; i++) p.apply([start(i, 1, 2), step(i, 2), finish(i, 2)]);
    expect((p as unknown as { nodes: Map<number, unknown> }).nodes.size).toBe(1);
  });
});

describe('build feedback outside the page', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function setup(focused: boolean) {
    let emit: (e: BuildEvent[]) => void = () => undefined;
    const unsubscribe = vi.fn();
    const service = {
      subscribe: vi.fn((_id: string, cb: (e: BuildEvent[]) => void): Subscription => {
        emit = cb;
        return { snapshot: { id: 'b1', state: 'queued' } as BuildRecord, unsubscribe };
      }),
    };
    const progress: Array<[number, string]> = [];
    const win: FeedbackWindow = {
      isDestroyed: () => false,
      isFocused: () => focused,
      setProgressBar: (p, o) => void progress.push([p, o?.mode ?? '']),
    };
    const notes: Array<[string, string]> = [];
    const stop: boolean[] = [];
    const fb = new BuildFeedback({ service, window: () => win, notify: (t, b) => void notes.push([t, b]), setStopEnabled: (r) => void stop.push(r), throttleMs: 100 });
    return { fb, emit: (e: BuildEvent[]) => emit(e), progress, notes, stop, unsubscribe };
  }

  it('drives the taskbar bar from the build and clears it at the end', () => {
    const t = setup(true);
    t.fb.track('b1', '/m/resnet.onnx');
    vi.advanceTimersByTime(100);
    // Shown from the start with a small determinate value: Linux launchers have no indeterminate
    // state (a value > 1 would leave the bar hidden until the first phase).
    expect(t.progress.at(-1)).toEqual([0.01, 'normal']);
    expect(t.stop.at(-1)).toBe(true);
    t.emit([start(1, null, 4)]);
    vi.advanceTimersByTime(100);
    expect(t.progress.at(-1)).toEqual([0.01, 'normal']);
    t.emit([step(1, 2)]);
    t.emit([step(1, 3)]);
    // Throttled: one redraw for both batches.
    vi.advanceTimersByTime(100);
    expect(t.progress).toEqual([[0.01, 'normal'], [0.75, 'normal']]);
    expect(t.progress.every(([p, mode]) => mode !== 'indeterminate' && p <= 1)).toBe(true);
    t.emit([done('succeeded')]);
    expect(t.progress.at(-1)).toEqual([-1, 'none']);
    expect(t.stop.at(-1)).toBe(false);
    expect(t.unsubscribe).toHaveBeenCalled();
    // The window had focus: no notification.
    expect(t.notes).toEqual([]);
  });

  it('notifies when a build ends while the window is in the background', () => {
    const t = setup(false);
    t.fb.track('b1', '/m/resnet.onnx');
    t.emit([done('failed', 'out of memory')]);
    expect(t.notes).toEqual([['Build failed', 'resnet.onnx after 12.3 s — out of memory']]);
  });

  it('does not pop "Build cancelled" for a build the quitting app stopped, but does for a user cancel', () => {
    const quit = setup(false);
    quit.fb.track('b1', '/m/resnet.onnx');
    quit.emit([ev({ type: 'build.cancelling', requestedAt: 1, reason: 'shutdown' })]);
    quit.emit([done('cancelled')]);
    expect(quit.notes).toEqual([]);
    expect(quit.progress.at(-1)).toEqual([-1, 'none']);

    const user = setup(false);
    user.fb.track('b1', '/m/resnet.onnx');
    user.emit([ev({ type: 'build.cancelling', requestedAt: 1, reason: 'user' }), done('cancelled')]);
    expect(user.notes.map(([title]) => title)).toEqual(['Build cancelled']);
  });

  it('notifies a crash with its own title', () => {
    const t = setup(false);
    t.fb.track('b1', '/m/resnet.onnx');
    t.emit([done('crashed')]);
    expect(t.notes[0][0]).toBe('Build crashed');
  });
});
