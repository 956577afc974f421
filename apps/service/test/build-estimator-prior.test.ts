// What a build starts with for its percentage (BuildEstimator, build.started.phaseShares): with no
// earlier build, the built-in prior of TensorRT's phase kinds, said to be the prior; after one,
// the learned shares, with the prior only for kinds they lack. A first build's predicted end stays
// a range from its own progress (source progress, basis 0), whatever the prior.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PHASE_SHARE_PRIOR } from '../../shared/build-estimate.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { BuildEstimator } from '../build-estimator.js';
import { BuildProfileStore } from '../build-profiles.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function store(): BuildProfileStore {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-estimator-prior-'));
  dirs.push(d);
  return new BuildProfileStore(d);
}

const started: BuildEvent = { v: 1, buildId: 'b1', seq: 0, t: 1, type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true };
const heartbeat = (t: number): BuildEvent => ({ v: 1, buildId: 'b1', seq: 1, t, type: 'heartbeat', sinceLastCallbackMs: 10, cancelRequested: false });
const sharesOf = (ev: BuildEvent) => (ev.type === 'build.started' ? ev.phaseShares : undefined);

describe('the phase shares a build starts with', () => {
  it('a first build (no profile anywhere) gets the prior, and says so', () => {
    const e = new BuildEstimator(store(), 'kind-a');
    expect(e.sharesSource).toBeUndefined();
    const first = e.annotate(started);
    expect(sharesOf(first)).toEqual(PHASE_SHARE_PRIOR);
    expect(e.sharesSource).toBe('prior');
    expect(first).toMatchObject({ phaseSharesSource: 'prior' });
    // No history of its kind: the predicted end comes from its own progress, a range, never from the prior alone.
    expect(e.annotate(heartbeat(1000), () => 0.5)).not.toHaveProperty('estimate');
    const hb = e.annotate(heartbeat(10_000), () => 0.4);
    expect(hb.type === 'heartbeat' && hb.estimate).toMatchObject({ basis: 0, source: 'progress' });
    if (hb.type === 'heartbeat' && hb.estimate) {
      expect(hb.estimate.lowMs).toBeLessThan(hb.estimate.remainingMs);
      expect(hb.estimate.highMs).toBeGreaterThan(hb.estimate.remainingMs);
    }
  });

  it('learned shares of an earlier build of any model win over the prior, kind by kind', () => {
    const s = store();
    s.add('another-model', { durationMs: 30_000, marks: {}, shares: { 'Building engine@2/6': 0.5, 'Building engine/Timing graph nodes@3/44': 0.25 } });
    const e = new BuildEstimator(s, 'kind-a');
    const ev = e.annotate(started);
    const shares = sharesOf(ev)!;
    expect(e.sharesSource).toBe('mixed');
    expect(ev).toMatchObject({ phaseSharesSource: 'mixed' });
    expect(shares['Building engine@2/6']).toBe(0.5);
    expect(shares['Building engine/Timing graph nodes@3/44']).toBe(0.25);
    for (const [k, v] of Object.entries(PHASE_SHARE_PRIOR)) if (k !== 'Building engine@2/6') expect(shares[k], k).toBe(v);
  });

  it('shares learned for every kind of the prior come from history alone, and build.started says so', () => {
    const s = store();
    s.add('another-model', { durationMs: 30_000, marks: {}, shares: Object.fromEntries(Object.keys(PHASE_SHARE_PRIOR).map((k) => [k, 0.5])) });
    const ev = new BuildEstimator(s, 'kind-a').annotate(started);
    expect(ev).toMatchObject({ phaseSharesSource: 'history' });
    for (const k of Object.keys(PHASE_SHARE_PRIOR)) expect(sharesOf(ev)![k], k).toBe(0.5);
  });

  it('an unreadable profile store still gives the prior', () => {
    const s = store();
    fs.writeFileSync(s.file, '{ not json');
    const e = new BuildEstimator(s, 'kind-a');
    expect(sharesOf(e.annotate(started))).toEqual(PHASE_SHARE_PRIOR);
    expect(e.sharesSource).toBe('prior');
  });
});
