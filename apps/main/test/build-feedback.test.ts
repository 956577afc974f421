import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Subscription } from '../../service/api.js';
import type { BuildEvent, BuildRecord, EventBody } from '../../shared/protocol.js';
import { BuildFeedback, type FeedbackWindow } from '../build-feedback.js';
import { viewFromRecord } from '../../shared/view-format.js';

let seq = 0;
const ev = (body: EventBody): BuildEvent => ({ v: 1, buildId: 'b1', seq: seq++, t: seq, ...body }) as BuildEvent;
const start = (id: number, parentId: number | null, nbSteps: number) => ev({ type: 'phase.start', id, parentId, name: `p${id}`, nbSteps, instance: 0 });
const step = (id: number, stepsDone: number) => ev({ type: 'phase.step', id, step: stepsDone - 1, stepsDone });
const finish = (id: number, stepsDone: number, early = false) => ev({ type: 'phase.finish', id, stepsDone, early });
const done = (status: 'succeeded' | 'cancelled' | 'failed' | 'crashed', error?: string) => ev({ type: 'build.finished', status, durationMs: 12_345, ...(error ? { error } : {}) });

describe('build feedback outside the page', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** `early`: events delivered before subscribe() returns, as an in-process host may. */
  function setup(focused: boolean, early: BuildEvent[] = []) {
    let emit: (e: BuildEvent[]) => void = () => undefined;
    const unsubscribe = vi.fn();
    const service = {
      subscribe: vi.fn((_id: string, cb: (e: BuildEvent[]) => void): Subscription => {
        emit = cb;
        if (early.length > 0) cb(early);
        const snapshot = { id: 'b1', state: 'queued', lastSeq: -1 } as BuildRecord;
        return { snapshot, view: viewFromRecord(snapshot).snapshot(), reset: false, unsubscribe };
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
    expect(t.progress).toEqual([
      [0.01, 'normal'],
      [0.75, 'normal'],
    ]);
    expect(t.progress.every(([p, mode]) => mode !== 'indeterminate' && p <= 1)).toBe(true);
    t.emit([done('succeeded')]);
    expect(t.progress.at(-1)).toEqual([-1, 'none']);
    expect(t.stop.at(-1)).toBe(false);
    expect(t.unsubscribe).toHaveBeenCalled();
    // The window had focus: no notification.
    expect(t.notes).toEqual([]);
  });

  it('keeps events that arrive before subscribe() returns, once each', () => {
    const first = [start(1, null, 4), step(1, 2)];
    const t = setup(true, first);
    t.fb.track('b1', '/m/resnet.onnx');
    t.emit([first[1], step(1, 3)]); // a replay overlapping the early batch
    vi.advanceTimersByTime(100);
    expect(t.progress).toEqual([[0.75, 'normal']]);
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

  it('notifies a crash with its own title and where it happened', () => {
    const t = setup(false);
    t.fb.track('b1', '/m/resnet.onnx');
    t.emit([ev({ type: 'build.finished', status: 'crashed', durationMs: 900, error: 'worker died', lastPhasePath: ['Building engine', 'Timing tactics'] })]);
    expect(t.notes).toEqual([['Build crashed', 'resnet.onnx after 900 ms — worker died (crashed in Building engine › Timing tactics)']]);
  });

  it("shows the build view's fraction, which never falls while nested phases restart", () => {
    const t = setup(true);
    t.fb.track('b1', '/m/resnet.onnx');
    // 1 of 4 outer steps done; its child, a kind no earlier build timed, gets half of the running
    // step and is half way: (1 + 0.5 × 0.5) / 4.
    t.emit([start(1, null, 4), step(1, 1), start(2, 1, 10), step(2, 5)]);
    vi.advanceTimersByTime(100);
    expect(t.progress.at(-1)![0]).toBeCloseTo(1.25 / 4);
    // The child finishes early and a new one starts at 0: its half stays spent, the new one
    // takes half of what is left, and the bar never falls.
    t.emit([finish(2, 5, true), start(3, 1, 10)]);
    vi.advanceTimersByTime(100);
    expect(t.progress.at(-1)![0]).toBeCloseTo(1.5 / 4);
  });
});
