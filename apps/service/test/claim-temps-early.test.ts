// The output claim records the worker's temp files (output-claim.ts, temps) so that a build taking
// over a killed holder's claim removes exactly those. The worker runs from its spawn on, and on a
// busy machine a temp file of it may exist before the holder's watch begins: such a file must be
// recorded all the same (a watch reports only what changes after it began). Here the launcher
// creates the file the moment the worker is spawned, before the build session can watch.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService } from '../build-service.js';
import { claimDir, claimFile, type ClaimHolder } from '../output-claim.js';
import { childProcessLauncher, type WorkerLauncher } from '../worker-host.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { until } from '../../../test/support/signal-storm.js';

let dir: string;
let model: string;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-claim-temps-early-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 4 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('output claim: temp files of the worker', () => {
  it('records one the worker created before the holder began to watch', async () => {
    const folder = fs.realpathSync(fs.mkdtempSync(path.join(dir, 'out-')));
    const out = path.join(folder, 'model.engine');
    // Every worker this service starts (a backends query may come first) gets its file at spawn.
    const temps = new Map<number, string>();
    const launcher: WorkerLauncher = () => {
      const ch = childProcessLauncher();
      if (ch.pid !== undefined) {
        const temp = `${out}.tmp-${ch.pid}-0`;
        fs.writeFileSync(temp, 'half an engine');
        temps.set(ch.pid, temp);
      }
      return ch;
    };
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), launcher });
    try {
      const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 30, simSeed: 7 } });
      const file = claimFile(claimDir(), out);
      let holder: ClaimHolder | undefined;
      await until('the claim to name the worker, watched', () => {
        try {
          holder = JSON.parse(fs.readFileSync(file, 'utf8')) as ClaimHolder;
        } catch {
          return false;
        }
        return holder.workerPid !== undefined && holder.temps !== undefined;
      });
      const temp = temps.get(holder!.workerPid!);
      expect(temp, 'the build worker was started through the launcher').toBeDefined();
      const st = fs.statSync(temp!);
      expect(holder!.temps).toContain(`${st.dev}:${st.ino}`);
      svc.cancelBuild(rec.id);
      expect((await svc.waitForResult(rec.id)).status).toBe('cancelled');
    } finally {
      await svc.shutdown();
    }
  }, 60_000);
});
