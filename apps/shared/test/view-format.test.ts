import { describe, expect, it } from 'vitest';
import { BuildView } from '../build-view.js';
import { BuildViewSnapshot } from '../build-view-schema.js';
import type { BuildRecord } from '../protocol.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';
import {
  stoppedMidTimingNote,
  formatCallback,
  formatCores,
  formatCurrentPath,
  formatLiveness,
  formatRemaining,
  livenessOf,
  PRIOR_WEIGHTS_NOTE,
  shownLiveness,
  viewFromRecord,
} from '../view-format.js';

describe('viewFromRecord', () => {
  it('starts empty from a record without a phase tree', () => {
    const v = viewFromRecord({
      id: 'x',
      state: 'queued',
      modelPath: '/m',
      options: { backend: 'auto' },
      queuedAt: '',
      lastSeq: -1,
      engineAvailable: false,
    } as unknown as BuildRecord);
    expect(v.status).toBe('queued');
    expect(v.rows.root.children).toEqual([]);
  });
});

describe('wording', () => {
  it('puts step counts where they tell something and escapes names', () => {
    expect(
      formatCurrentPath([
        { name: 'Building engine', stepsDone: 2, nbSteps: 6 },
        { name: 'subgraph', stepsDone: 0, nbSteps: 1 },
        { name: 'Time\x07', stepsDone: 9, nbSteps: 4 },
      ]),
    ).toBe('Building engine 2/6 › subgraph › Time\\x07 4/4');
  });

  it("says busy or stalled from the worker's cores and the GPU", () => {
    const live = (cpu: [number, number][], gpu?: number) => {
      const v = new BuildView('b');
      v.cpu = cpu;
      if (gpu !== undefined) v.gpu = { t: 2000, percent: gpu };
      return livenessOf(v);
    };
    expect(live([])).toBeUndefined();
    expect(formatLiveness(live([]))).toBeUndefined();
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 10],
        ]),
      ),
    ).toBe('no CPU use');
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 1000],
        ]),
      ),
    ).toBe('builder busy, 1.0 core');
    // Below half a core the word matches the figure: working, lightly.
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 100],
        ]),
      ),
    ).toBe('builder working lightly, 0.1 cores');
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 500],
        ]),
      ),
    ).toBe('builder busy, 0.5 cores');
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 1460],
        ]),
      ),
    ).toBe('builder busy, 1.5 cores');
    expect(
      formatLiveness(
        live([
          [1000, 0],
          [2000, 12_300],
        ]),
      ),
    ).toBe('builder busy, 12 cores');
    // A silent builder whose CPU idles while the GPU times tactics is working, not stalled.
    expect(
      live(
        [
          [1000, 0],
          [2000, 10],
        ],
        87,
      ),
    ).toEqual({ cores: 0.01, gpuPercent: 87, busy: true });
    expect(
      formatLiveness(
        live(
          [
            [1000, 0],
            [2000, 10],
          ],
          87,
        ),
      ),
    ).toBe('builder busy, CPU idle, GPU 87%');
    expect(
      formatLiveness(
        live(
          [
            [1000, 0],
            [2000, 1500],
          ],
          40,
        ),
      ),
    ).toBe('builder busy, 1.5 cores, GPU 40%');
    expect(
      formatLiveness(
        live(
          [
            [1000, 0],
            [2000, 10],
          ],
          2,
        ),
      ),
    ).toBe('no CPU or GPU use');
    // The GPU figure alone (before the second CPU reading).
    expect(formatLiveness(live([[1000, 0]], 60))).toBe('builder busy, GPU 60%');
    expect(formatLiveness(live([[1000, 0]], 0))).toBe('no CPU or GPU use');
  });

  it('says how the GPU memory beside the utilisation was measured, or why it is unknown', () => {
    const text = (detail: Record<string, unknown>) => {
      const v = new BuildView('b');
      v.cpu = [
        [0, 0],
        [1000, 900],
      ];
      v.gpu = { t: 1000, percent: 80 };
      v.gpuDetail = detail as BuildView['gpuDetail'];
      return formatLiveness(livenessOf(v));
    };
    expect(text({ memoryBytes: 3 * 2 ** 30 })).toBe('builder busy, 0.9 cores, GPU 80% · 3 GiB');
    expect(text({ memoryBytes: 3 * 2 ** 30, memorySource: 'process' })).toBe('builder busy, 0.9 cores, GPU 80% · 3 GiB');
    expect(text({ memoryBytes: 3 * 2 ** 30, memorySource: 'device-delta', memoryUnknown: 'NVML does not list this process' })).toBe(
      'builder busy, 0.9 cores, GPU 80% · GPU memory (device delta) 3 GiB',
    );
    expect(text({ memoryUnknown: 'the driver withholds per-process GPU memory' })).toBe(
      'builder busy, 0.9 cores, GPU 80% · GPU memory unknown: the driver withholds per-process GPU memory',
    );
  });

  it('calls an idle builder out only once TensorRT has been quiet a while; a busy one always', () => {
    const v = new BuildView('b');
    v.apply({ v: 1, buildId: 'b', seq: 0, t: 0, type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 6, instance: 0 } as never, 0);
    v.cpu = [
      [0, 0],
      [1000, 5],
    ];
    expect(shownLiveness(v, 500)).toBeUndefined();
    expect(formatCallback(v, 500)).toBe('last TensorRT callback 500 ms ago');
    expect(shownLiveness(v, 2500)).toEqual({ cores: 0.005, gpuPercent: undefined, busy: false });
    expect(formatCallback(v, 2500)).toBe('last TensorRT callback 2.5 s ago (no CPU use)');
    v.cpu = [
      [0, 0],
      [1000, 900],
    ];
    expect(formatCallback(v, 100)).toBe('last TensorRT callback 100 ms ago (builder busy, 0.9 cores)');
  });

  it('counts cores', () => {
    expect(formatCores(1.62)).toBe('1.6 cores');
    expect(formatCores(1)).toBe('1.0 core');
    expect(formatCores(0.96)).toBe('1.0 core');
    expect(formatCores(0.3)).toBe('0.3 cores');
  });

  it('gives the predicted end with its range, and says when it has passed', () => {
    expect(formatRemaining({ remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 3 })).toBe('about 12.0 s left (9.0 s–15.0 s)');
    expect(formatRemaining({ remainingMs: 5000, lowMs: 5000, highMs: 5000, basis: 1 })).toBe('about 5.0 s left');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 4000, basis: 2 })).toBe('past the predicted end (up to 4.0 s more)');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 0, basis: 2 })).toBe('past the predicted end');
    // A range narrower than the rounding is one figure, not "9.9 s–9.9 s".
    expect(formatRemaining({ remainingMs: 9900, lowMs: 9880, highMs: 9920, basis: 3 })).toBe('about 9.9 s left');
  });

  // A first build's estimate is drawn from its percentage; with no earlier build's phase weights
  // (build.started phaseSharesSource "prior") the percentage rests on typical TensorRT phases.
  const firstBuild = (phaseSharesSource?: 'history' | 'prior' | 'mixed') => {
    const w = new StreamWriter('b1');
    w.emit({
      type: 'build.started',
      backend: 'simulated',
      backendVersion: 'sim-1',
      simulated: true,
      phaseShares: { 'Building engine@2/6': 0.5 },
      ...(phaseSharesSource ? { phaseSharesSource } : {}),
    });
    const root = w.start('Building engine', null, 4);
    w.step(root, 0);
    w.emit({ type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false, estimate: { remainingMs: 12_000, lowMs: 6000, highMs: 36_000, basis: 0, source: 'progress' } });
    const v = new BuildView('b1');
    for (const e of w.events) v.apply(e, 0);
    return v;
  };

  it("says a first build's estimate rests on typical phase weights when the prior alone weighs its progress", () => {
    const prior = firstBuild('prior');
    expect(prior.phaseSharesSource).toBe('prior');
    expect(formatRemaining(prior.remaining()!, prior.phaseSharesSource)).toBe(`about 12.0 s left (6.0 s–36.0 s) (estimate from progress so far, ${PRIOR_WEIGHTS_NOTE})`);
    // The snapshot keeps it (with build.started), through the wire schema.
    const again = BuildView.fromSnapshot(BuildViewSnapshot.parse(JSON.parse(JSON.stringify(prior.snapshot()))));
    expect(again.phaseSharesSource).toBe('prior');
    for (const source of ['history', 'mixed', undefined] as const) {
      const v = firstBuild(source);
      expect(formatRemaining(v.remaining()!, v.phaseSharesSource), String(source)).toBe('about 12.0 s left (6.0 s–36.0 s) (estimate from progress so far)');
    }
    // An estimate from earlier builds of the same kind is no extrapolation of the percentage: no note.
    expect(formatRemaining({ remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 3, source: 'history' }, 'prior')).toBe('about 12.0 s left (9.0 s–15.0 s)');
  });
});

describe('stoppedMidTimingNote', () => {
  it('explains misses beyond what a stopped build kept, and nothing otherwise', () => {
    expect(stoppedMidTimingNote({ savedAfterCancel: true, misses: 98, added: 94 })).toBe('4 tactics were being timed when the build stopped: counted as misses, not kept');
    expect(stoppedMidTimingNote({ savedAfterCancel: true, misses: 95, added: 94 })).toBe('1 tactic was being timed when the build stopped: counted as misses, not kept');
    expect(stoppedMidTimingNote({ savedAfterCancel: true, misses: 94, added: 94 })).toBeUndefined();
    expect(stoppedMidTimingNote({ savedAfterCancel: false, misses: 98, added: 94 })).toBeUndefined();
    expect(stoppedMidTimingNote({ savedAfterCancel: true, added: 94 })).toBeUndefined();
  });
});
