// The predicted end through the real service and worker: profiles of earlier identical builds
// (kept in the state directory) give each heartbeat an estimate; with no history, only the
// estimate from the build's own progress (basis 0), never one claiming earlier builds. And the
// worker's CPU time rides on every heartbeat.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { createBuildService } from '../build-service.js';
import { BuildProfileStore } from '../build-profiles.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-predicted-end-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 12 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Heartbeat = Extract<BuildEvent, { type: 'heartbeat' }>;

describe('predicted end', () => {
  it('claims no history without history; on the third identical build it is within 20% from a quarter of the way in', async () => {
    const profiles = new BuildProfileStore(path.join(dir, 'state'));
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles, heartbeatMs: 100, crashDir: path.join(dir, 'crash') });
    const options = { backend: 'simulated' as const, simDuration: 2, simSeed: 11 };
    const runs: { beats: Heartbeat[]; durationMs: number }[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const rec = await svc.startBuild({ modelPath: model, options });
        const events: BuildEvent[] = [];
        svc.subscribe(rec.id, (evs) => events.push(...evs), { afterSeq: -1 });
        const fin = await svc.waitForResult(rec.id);
        expect(fin.status).toBe('succeeded');
        runs.push({ beats: events.filter((e): e is Heartbeat => e.type === 'heartbeat'), durationMs: fin.durationMs });
      }
    } finally {
      await svc.shutdown();
    }
    const [first, second, third] = runs;
    expect(first.beats.length).toBeGreaterThan(5);
    // A first build may estimate from its own progress once it is far enough in (how far a 2 s
    // build gets before a heartbeat depends on the machine's load), but never from history.
    expect(first.beats.every((b) => !b.estimate || (b.estimate.source === 'progress' && b.estimate.basis === 0))).toBe(true);
    expect(second.beats.some((b) => b.estimate?.basis === 1)).toBe(true);

    const quarter = third.beats.find((b) => b.t >= third.durationMs / 4 && b.estimate);
    expect(quarter, 'a heartbeat with an estimate from a quarter of the way in').toBeDefined();
    const predictedEnd = quarter!.t + quarter!.estimate!.remainingMs;
    console.log(`predicted end at ${quarter!.t.toFixed(0)} ms: ${predictedEnd.toFixed(0)} ms; actual ${third.durationMs.toFixed(0)} ms (basis ${quarter!.estimate!.basis})`);
    // Up to two earlier builds; one whose milestones differ at that point (builder threads
    // interleave differently) is left out rather than guessed from.
    expect(quarter!.estimate!.basis).toBeGreaterThanOrEqual(1);
    expect(third.beats.some((b) => b.estimate?.basis === 2)).toBe(true);
    expect(Math.abs(predictedEnd - third.durationMs)).toBeLessThanOrEqual(0.2 * third.durationMs);
    expect(quarter!.estimate!.lowMs).toBeLessThanOrEqual(quarter!.estimate!.remainingMs);
    expect(quarter!.estimate!.highMs).toBeGreaterThanOrEqual(quarter!.estimate!.remainingMs);
    // Kept in the state directory for the next run: one build kind, the three builds' profiles.
    const kinds = Object.values(JSON.parse(fs.readFileSync(profiles.file, 'utf8')).kinds) as { profiles: unknown[] }[];
    expect(kinds.map((k) => k.profiles.length)).toEqual([3]);

    // The worker's CPU time: on every heartbeat, never falling.
    for (const run of runs) {
      const cpu = run.beats.map((b) => b.workerCpuMs);
      expect(cpu.every((c) => typeof c === 'number' && c >= 0)).toBe(true);
      for (let i = 1; i < cpu.length; i++) expect(cpu[i]!).toBeGreaterThanOrEqual(cpu[i - 1]!);
      expect(cpu[cpu.length - 1]!).toBeGreaterThan(0);
    }
  }, 60_000);

  it('predicts builds from a warm timing cache only from earlier warm builds', async () => {
    const profiles = new BuildProfileStore(path.join(dir, 'state-warm'));
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles, heartbeatMs: 50, crashDir: path.join(dir, 'crash') });
    const options = { backend: 'simulated' as const, simDuration: 1.5, simSeed: 21, timingCache: path.join(dir, 'warm.cache') };
    const beats: Heartbeat[][] = [];
    try {
      // Queued together: whether the cache is warm is judged when each build starts, after the
      // one before it saved its entries, not when it was queued.
      const recs = [];
      for (let i = 0; i < 3; i++) recs.push(await svc.startBuild({ modelPath: model, options }));
      for (const rec of recs) {
        const events: BuildEvent[] = [];
        svc.subscribe(rec.id, (evs) => events.push(...evs), { afterSeq: -1 });
        expect((await svc.waitForResult(rec.id)).status).toBe('succeeded');
        beats.push(events.filter((e): e is Heartbeat => e.type === 'heartbeat'));
      }
    } finally {
      await svc.shutdown();
    }
    const [cold, firstWarm, secondWarm] = beats;
    expect(cold.some((b) => b.estimate)).toBe(false);
    // The cold build's profile does not predict the first warm one (it would say far too long).
    expect(firstWarm.some((b) => b.estimate)).toBe(false);
    expect(secondWarm.some((b) => b.estimate?.basis === 1)).toBe(true);
    const kinds = Object.values(JSON.parse(fs.readFileSync(profiles.file, 'utf8')).kinds) as { profiles: unknown[] }[];
    expect(kinds.map((k) => k.profiles.length).sort()).toEqual([1, 2]);
  }, 60_000);

  it('a different seed is a different build kind: no estimate from the others', async () => {
    const profiles = new BuildProfileStore(path.join(dir, 'state'));
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles, heartbeatMs: 100, crashDir: path.join(dir, 'crash') });
    try {
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.6, simSeed: 12 } });
      const events: BuildEvent[] = [];
      svc.subscribe(rec.id, (evs) => events.push(...evs), { afterSeq: -1 });
      await svc.waitForResult(rec.id);
      const beats = events.filter((e): e is Heartbeat => e.type === 'heartbeat');
      expect(beats.length).toBeGreaterThan(0);
      expect(beats.some((b) => b.estimate)).toBe(false);
    } finally {
      await svc.shutdown();
    }
  });
});
