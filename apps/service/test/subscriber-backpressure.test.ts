// A subscriber that cannot keep up (its callback returns a promise: "busy until it settles"):
// the service holds its events with steps coalesced, delivers the rest once it is ready again,
// and drops it (onOverflow, resumable from the last seq it got) past a bound, instead of
// buffering for it without limit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import type { BuildSession } from '../build-session.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { SubscriberBacklog } from '../subscriber-backlog.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const services: BuildService[] = [];

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-backpressure-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 40 });
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const base = { v: 1 as const, buildId: 'b', t: 0 };

describe('SubscriberBacklog', () => {
  it('keeps the latest step per phase, folds a step into its finish, keeps one heartbeat and everything else', () => {
    const b = new SubscriberBacklog();
    const evs: BuildEvent[] = [
      { ...base, seq: 0, type: 'phase.start', id: 1, parentId: null, name: 'A', nbSteps: 9, instance: 0 },
      { ...base, seq: 1, type: 'phase.step', id: 1, step: 0, stepsDone: 1 },
      { ...base, seq: 2, type: 'heartbeat', sinceLastCallbackMs: 1, cancelRequested: false },
      { ...base, seq: 3, type: 'phase.step', id: 1, step: 1, stepsDone: 2 },
      { ...base, seq: 4, type: 'phase.start', id: 2, parentId: 1, name: 'B', nbSteps: 2, instance: 0 },
      { ...base, seq: 5, type: 'phase.step', id: 2, step: 1, stepsDone: 2 },
      { ...base, seq: 6, type: 'phase.finish', id: 2, stepsDone: 2, early: false },
      { ...base, seq: 7, type: 'heartbeat', sinceLastCallbackMs: 2, cancelRequested: false },
      { ...base, seq: 8, type: 'log', severity: 'info', message: 'm' },
    ];
    b.push(evs.slice(0, 4));
    b.push(evs.slice(4));
    expect(b.size).toBe(6);
    expect(b.coalesced).toBe(3);
    expect(b.take().map((e) => e.seq)).toEqual([0, 3, 4, 6, 7, 8]);
    expect(b.size).toBe(0);
  });
});

describe('a busy subscriber', () => {
  it('gets nothing while busy, then the rest of the stream, coalesced and whole', async () => {
    const svc = createBuildService({ outputDir: path.join(dir, 'engines') });
    services.push(svc);
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.6, simSeed: 2 } });
    const got: BuildEvent[] = [];
    let calls = 0;
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    svc.subscribe(
      rec.id,
      (events) => {
        got.push(...events);
        // The first delivery leaves the subscriber busy until released (a socket full, say).
        return calls++ === 0 ? stalled : undefined;
      },
      { afterSeq: -1 },
    );
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('succeeded');
    expect(calls).toBe(1);
    const before = got.length;
    release();
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(2);
    expect(got.length).toBeGreaterThan(before);
    const events = assertEventStream(got);
    expect(events[events.length - 1]).toMatchObject({ type: 'build.finished', seq: fin.seq });
  }, 30_000);

  it('is dropped past its bound and told from where to resume', async () => {
    const svc = createBuildService({ outputDir: path.join(dir, 'engines') });
    services.push(svc);
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.6, simSeed: 2 } });
    const session = (svc as unknown as { sessions: Map<string, BuildSession> }).sessions.get(rec.id)!;
    const got: BuildEvent[] = [];
    let overflowAt: number | undefined;
    session.subscribe(
      (events) => {
        got.push(...events);
        return new Promise(() => {}); // never ready again
      },
      -1,
      { maxBacklog: 50, onOverflow: (seq) => (overflowAt = seq) },
    );
    await svc.waitForResult(rec.id);
    expect(overflowAt).toBe(got[got.length - 1].seq);
    // What it missed is still there for a resume (replay after that seq, ending with the result).
    const resumed: BuildEvent[] = [];
    svc.subscribe(rec.id, (evs) => resumed.push(...evs), { afterSeq: overflowAt });
    await new Promise((r) => setTimeout(r, 20));
    expect(resumed[0].seq).toBeGreaterThan(overflowAt!);
    expect(resumed[resumed.length - 1].type).toBe('build.finished');
  }, 30_000);
});
