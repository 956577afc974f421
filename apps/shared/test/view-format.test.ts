import { describe, expect, it } from 'vitest';
import { tensorrtLikeStream } from '../../../test/support/synthetic-build.js';
import { BuildView } from '../build-view.js';
import type { BuildEvent, BuildRecord, PhaseNode } from '../protocol.js';
import { formatCurrentPath, formatLiveness, formatRemaining, rowLines, viewFromRecord } from '../view-format.js';

/** The phase tree the service's record holds after `events` (what a late joiner gets today). */
function recordOf(events: readonly BuildEvent[]): BuildRecord {
  const nodes = new Map<number, PhaseNode>();
  for (const ev of events) {
    if (ev.type === 'phase.start') nodes.set(ev.id, { id: ev.id, parentId: ev.parentId, name: ev.name, nbSteps: ev.nbSteps, instance: ev.instance, stepsDone: 0, startT: ev.t });
    else if (ev.type === 'phase.step') nodes.get(ev.id)!.stepsDone = ev.stepsDone;
    else if (ev.type === 'phase.finish') Object.assign(nodes.get(ev.id)!, { endT: ev.t, stepsDone: ev.stepsDone, early: ev.early });
  }
  const last = events.at(-1)!;
  return { id: 'b-test', state: 'running', modelPath: '/m.onnx', options: { backend: 'simulated' }, queuedAt: '', lastSeq: last.seq, phases: [...nodes.values()], engineAvailable: false };
}

describe('viewFromRecord', () => {
  it('gives a late joiner the same current path, work and rows as a view that saw every event', () => {
    const events = tensorrtLikeStream(11, 9);
    for (const cut of [40, 120, 260, events.length - 3]) {
      const live = new BuildView('b-test');
      for (const e of events.slice(0, cut)) live.apply(e);
      const joined = viewFromRecord(recordOf(events.slice(0, cut)));
      expect(joined.currentPath(), `after ${cut} events`).toEqual(live.currentPath());
      expect(joined.work).toBe(live.work);
      expect(joined.seq).toBe(live.seq);
      expect(rowLines(joined, 5000)).toEqual(rowLines(live, 5000));
      // And the events after the record continue it.
      for (const e of events.slice(cut)) {
        joined.apply(e);
        live.apply(e);
      }
      expect(joined.outcome).toEqual(live.outcome);
      expect(rowLines(joined, 0)).toEqual(rowLines(live, 0));
    }
  });

  it('starts empty from a record without a phase tree', () => {
    const v = viewFromRecord({ id: 'x', state: 'queued', modelPath: '/m', options: { backend: 'auto' }, queuedAt: '', lastSeq: -1, engineAvailable: false } as unknown as BuildRecord);
    expect(v.status).toBe('queued');
    expect(v.rows.root.children).toEqual([]);
  });
});

describe('wording', () => {
  it('puts step counts where they tell something and escapes names', () => {
    expect(formatCurrentPath([{ name: 'Building engine', stepsDone: 2, nbSteps: 6 }, { name: 'subgraph', stepsDone: 0, nbSteps: 1 }, { name: 'Time\x07', stepsDone: 9, nbSteps: 4 }])).toBe(
      'Building engine 2/6 › subgraph › Time\\x07 4/4',
    );
  });

  it('says busy or stalled from the worker\'s cores', () => {
    expect(formatLiveness(undefined)).toBeUndefined();
    expect(formatLiveness(0.01)).toBe('no CPU use');
    expect(formatLiveness(1)).toBe('builder busy, 1.0 core');
    expect(formatLiveness(1.46)).toBe('builder busy, 1.5 cores');
  });

  it('gives the predicted end with its range, and says when it has passed', () => {
    expect(formatRemaining({ remainingMs: 12_000, lowMs: 9000, highMs: 15_000, basis: 3 })).toBe('about 12.0 s left (9.0 s–15.0 s)');
    expect(formatRemaining({ remainingMs: 5000, lowMs: 5000, highMs: 5000, basis: 1 })).toBe('about 5.0 s left');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 4000, basis: 2 })).toBe('past the predicted end (up to 4.0 s more)');
    expect(formatRemaining({ remainingMs: 0, lowMs: 0, highMs: 0, basis: 2 })).toBe('past the predicted end');
  });
});
