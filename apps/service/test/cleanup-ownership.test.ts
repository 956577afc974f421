// Issue 40 item 1/4: a build that ends without succeeding removes only what it created. Whatever
// appears at the output path while it runs (a symbolic link to someone's file, a FIFO, a folder,
// another build's finished engine and manifest) is still there, unchanged, after the worker
// crashed or was killed; the service never throws out of the clean-up; two builds naming one
// output never run at once. Real worker processes and the addon's simulated backend; the thing at
// the output path is planted by the launcher, after the build looked at the path at launch.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../build-service.js';
import { childProcessLauncher, type WorkerLauncher } from '../worker-host.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { SYMLINK_FIFO_FOLDER, type Planted } from '../../../test/support/planted-outputs.js';

let dir: string;
let model: string;
const services: BuildService[] = [];
const sim = (extra: Record<string, unknown> = {}) => ({ backend: 'simulated' as const, simDuration: 0.3, simSeed: 7, ...extra });

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-cleanup-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 5 });
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A service whose next build's launch runs `plant` right after the worker starts. */
function serviceWithPlant(plant: () => void, opts: Parameters<typeof createBuildService>[0] = {}): { svc: BuildService; arm: () => void } {
  let armed = false;
  const launcher: WorkerLauncher = () => {
    const ch = childProcessLauncher();
    if (armed) plant();
    armed = false;
    return ch;
  };
  const svc = createBuildService({ outputDir: path.join(dir, 'engines'), launcher, ...opts });
  services.push(svc);
  return { svc, arm: () => (armed = true) };
}

const cases: Planted[] = [
  SYMLINK_FIFO_FOLDER[0]!,
  {
    // A file the worker did not write (its inode is none of the worker's temp files), without a
    // manifest to say whose it is: another process's engine renamed in just before its manifest.
    what: 'a regular file it did not write',
    plant: (out) => fs.writeFileSync(out, "someone else's engine"),
    check: (out) => expect(fs.readFileSync(out, 'utf8')).toBe("someone else's engine"),
  },
  ...SYMLINK_FIFO_FOLDER.slice(1),
];

describe('clean-up removes only what the build created', () => {
  for (const c of cases) {
    it(`a crashed worker leaves ${c.what} at the output path alone`, async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'out-'));
      const out = path.join(folder, 'model.engine');
      const { svc, arm } = serviceWithPlant(() => c.plant(out, folder));
      await svc.listBackends();
      arm();
      const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simFault: 'crash' }) });
      const fin = await svc.waitForResult(rec.id);
      // Crashed, or failed first when the native layer saw the path was not a file to replace.
      expect(['crashed', 'failed']).toContain(fin.status);
      c.check(out, folder);
      // The service still works.
      const next = await svc.startBuild({ modelPath: model, outputPath: path.join(folder, 'next.engine'), options: sim() });
      expect((await svc.waitForResult(next.id)).status).toBe('succeeded');
    });
  }

  it("a killed worker leaves another build's engine and manifest that appeared at its output path", async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'other-'));
    const out = path.join(folder, 'model.engine');
    const donor = path.join(folder, 'donor.engine');
    const first = createBuildService({ outputDir: path.join(dir, 'engines') });
    services.push(first);
    const d = await first.startBuild({ modelPath: model, outputPath: donor, options: sim() });
    expect((await first.waitForResult(d.id)).status).toBe('succeeded');
    const engineBytes = fs.readFileSync(donor);
    const manifestText = fs.readFileSync(`${donor}.manifest.json`, 'utf8');
    const { svc, arm } = serviceWithPlant(
      () => {
        fs.writeFileSync(out, engineBytes);
        fs.writeFileSync(`${out}.manifest.json`, manifestText);
      },
      { cancelKillMs: 300 },
    );
    await svc.listBackends();
    arm();
    const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simFault: 'crash' }) });
    expect((await svc.waitForResult(rec.id)).status).toBe('crashed');
    expect(fs.readFileSync(out).equals(engineBytes)).toBe(true);
    expect(fs.readFileSync(`${out}.manifest.json`, 'utf8')).toBe(manifestText);
  });

  it('a second build naming the same output while the first runs is refused and touches nothing', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'two-'));
    const out = path.join(folder, 'model.engine');
    const svc = createBuildService({ outputDir: path.join(dir, 'engines'), concurrency: 2 });
    services.push(svc);
    const a = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simDuration: 1.5 }) });
    const b = await svc.startBuild({ modelPath: model, outputPath: out, options: sim({ simDuration: 0.2 }) });
    const fb = await svc.waitForResult(b.id);
    expect(fb.status).toBe('failed');
    expect(fb.error).toContain(`another build (${a.id}) is writing`);
    expect((await svc.waitForResult(a.id)).status).toBe('succeeded');
    const m = JSON.parse(fs.readFileSync(`${out}.manifest.json`, 'utf8')) as { buildId: string };
    expect(m.buildId).toBe(a.id);
    // Once the first ended, the same output is free again.
    const c = await svc.startBuild({ modelPath: model, outputPath: out, options: sim() });
    expect((await svc.waitForResult(c.id)).status).toBe('succeeded');
  });
});
