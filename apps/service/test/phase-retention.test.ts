// A big simulated build through the real service and worker: the snapshot a late subscriber gets
// (BuildRecord.phases) holds open phases plus at most retainFinishedPhases finished ones, and no
// phase without its parent.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, PhaseNode } from '../../shared/protocol.js';
import { createBuildService } from '../build-service.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-retention-');
  model = writeModel(path.join(dir, 'big.onnx'), { layers: 400 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function expectBounded(phases: readonly PhaseNode[], limit: number): void {
  const ids = new Set(phases.map((p) => p.id));
  const open = phases.filter((p) => p.endT === undefined).length;
  expect(phases.length - open).toBeLessThanOrEqual(limit);
  for (const p of phases) if (p.parentId !== null) expect(ids.has(p.parentId)).toBe(true);
}

describe('service phase retention', () => {
  it('bounds the snapshot of a big build while keeping every open phase', async () => {
    const limit = 500;
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), retainFinishedPhases: limit });
    try {
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 1, simSeed: 3 } });
      const started = new Set<number>();
      const open = new Set<number>();
      let midChecked = false;
      svc.subscribe(
        rec.id,
        (evs: BuildEvent[]) => {
          for (const e of evs) {
            if (e.type === 'phase.start') {
              started.add(e.id);
              open.add(e.id);
            } else if (e.type === 'phase.finish') open.delete(e.id);
          }
          // A late subscriber's view mid-build: every phase open at this point is in it.
          if (!midChecked && started.size > 4 * limit && open.size > 0) {
            midChecked = true;
            const snap = svc.getBuild(rec.id)!.phases;
            expectBounded(snap, limit);
            const ids = new Set(snap.map((p) => p.id));
            for (const id of open) expect(ids.has(id)).toBe(true);
          }
        },
        { afterSeq: -1 },
      );
      const result = await svc.waitForResult(rec.id);
      expect(result.status).toBe('succeeded');
      expect(midChecked).toBe(true);
      // The build really was big compared with the limit.
      expect(started.size).toBeGreaterThan(10 * limit);
      const final = svc.getBuild(rec.id)!.phases;
      expectBounded(final, limit);
      expect(final.length).toBeGreaterThan(0);
      expect(final.length).toBeLessThanOrEqual(limit);
      // The root phase finished last, so it is among the retained ones.
      expect(final.some((p) => p.parentId === null)).toBe(true);
    } finally {
      await svc.shutdown();
    }
  });

  it('rejects a negative retainFinishedPhases', () => {
    expect(() => createBuildService({ retainFinishedPhases: -5 })).toThrow(/retainFinishedPhases/);
  });
});
