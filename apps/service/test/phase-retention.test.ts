// A big simulated build through the real service and worker: the view a late subscriber starts
// from is bounded by the build's distinct phase paths (not by how many phases it started), holds
// every phase open at that moment, and continued by the live events it ends as the service's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
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

describe('service build view of a big build', () => {
  it('is bounded by distinct paths, keeps every open phase, and a late joiner ends where the service does', async () => {
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), profiles: null, crashDir: path.join(dir, 'crash') });
    try {
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 1, simSeed: 3 } });
      const started = new Set<number>();
      const open = new Set<number>();
      const paths = new Set<string>();
      const names = new Map<number, string>();
      let late: { view: BuildView; events: BuildEvent[] } | undefined;
      svc.subscribe(
        rec.id,
        (evs: BuildEvent[]) => {
          for (const e of evs) {
            if (e.type === 'phase.start') {
              started.add(e.id);
              open.add(e.id);
              const p = `${e.parentId === null ? '' : names.get(e.parentId)}/${e.name}`;
              names.set(e.id, p);
              paths.add(p);
            } else if (e.type === 'phase.finish') open.delete(e.id);
          }
          // Join mid-build, the way a second window or a reconnecting client does.
          if (!late && started.size > 2000 && open.size > 0) {
            const sub = svc.subscribe(rec.id, (more) => void late!.events.push(...more));
            late = { view: BuildView.fromSnapshot(sub.view), events: [] };
            const openIds = new Set(sub.view.rows.open.map((o) => o.id));
            for (const id of open) expect(openIds.has(id)).toBe(true);
            expect(sub.view.rows.rows.length).toBeLessThanOrEqual(paths.size);
          }
        },
        { afterSeq: -1 },
      );
      const result = await svc.waitForResult(rec.id);
      expect(result.status).toBe('succeeded');
      expect(late).toBeDefined();
      // The build really was big compared with what the view holds.
      const final = svc.getView(rec.id)!;
      expect(started.size).toBeGreaterThan(20 * final.rows.rows.length);
      expect(final.rows.rows.length).toBe(paths.size);
      expect(final.rows.open).toEqual([]);
      for (const e of late!.events) late!.view.apply(e);
      expect(late!.view.snapshot()).toEqual(final);
    } finally {
      await svc.shutdown();
    }
  });
});
