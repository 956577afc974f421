// A build with the verbose log on, through the real service and worker: the simulator's whole
// verbose quota (200,000 lines) reaches a live subscriber, while what the service keeps for later
// (its replay window, the build view a page or a reconnecting client first gets) stays bounded.
// Prints one JSON line with the figures (`service-verbose-volume:` prefix) for the record.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { VIEW_LOG_LINES } from '../../shared/recent-logs.js';
import { createBuildService } from '../build-service.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const LAYERS = 3_000;
const RETAIN = 20_000;
/** The simulator's cap on verbose lines per build (native/src/sim/sim_backend.cc). */
const SIM_VERBOSE_CAP = 200_000;

let dir: string;
let model: string;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-verbose-volume-');
  model = writeModel(path.join(dir, 'big.onnx'), { layers: LAYERS });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a huge verbose build through the service', () => {
  it(`${LAYERS} layers: a live subscriber gets every verbose line; the kept events and the view stay bounded`, async () => {
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), crashDir: path.join(dir, 'crash'), retainEvents: RETAIN });
    try {
      const t0 = Date.now();
      const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 4, simSeed: 3, verboseLog: true } });
      let verbose = 0;
      let events = 0;
      let lastVerbose = '';
      svc.subscribe(
        rec.id,
        (evs: BuildEvent[]) => {
          events += evs.length;
          for (const e of evs) {
            if (e.type === 'log' && e.severity === 'verbose') {
              verbose++;
              lastVerbose = e.message;
            }
          }
        },
        { afterSeq: -1 },
      );
      const fin = await svc.waitForResult(rec.id);
      const wallS = (Date.now() - t0) / 1000;
      expect(fin.status).toBe('succeeded');

      // Kept for later: a subscriber from the start is told to begin from the view instead.
      let replayed = 0;
      const late = svc.subscribe(rec.id, (evs) => (replayed += evs.length), { afterSeq: -1 });
      late.unsubscribe();
      const view = svc.getView(rec.id)!;
      const heapMiB = +(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1);
      console.log(
        `service-verbose-volume: ${JSON.stringify({ layers: LAYERS, wallS, events, verbose, viewLogs: view.logs.length, viewLogsDropped: view.logsDropped, lateReset: late.reset, replayed, heapMiB })}`,
      );

      expect(verbose).toBe(SIM_VERBOSE_CAP);
      expect(lastVerbose).toMatch(/^(\[simulated\] |Autotuning op )/);
      expect(view.logs.length).toBe(VIEW_LOG_LINES);
      expect(view.logsDropped).toBeGreaterThanOrEqual(SIM_VERBOSE_CAP - VIEW_LOG_LINES);
      // The view's last lines are the build's last log lines, not its first ones.
      expect(view.logs.at(-1)!.seq).toBeGreaterThan(view.logs[0].seq);
      expect(late.reset).toBe(true);
      expect(replayed).toBeLessThanOrEqual(RETAIN);
      expect(wallS).toBeLessThan(120);
    } finally {
      await svc.shutdown();
    }
  }, 180_000);
});
