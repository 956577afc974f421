// Issue 40's first not-negotiable, for every way a build ends without succeeding: after a cancel,
// a failure, a kill (the worker ended after a cancel it could not answer) or a crash, no file the
// build did not create is missing or changed. Things appear at the output path after the build
// looked at it (a symbolic link to someone's file, another build's engine and manifest, a FIFO,
// a folder) and each ending leaves them as they were, with no temp file left and the build's
// claim on the output (output-claim.ts) released. cleanup-ownership.test.ts has more crashes.
// Real worker processes and the addon's simulated backend.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../build-service.js';
import { claimDir, claimFile } from '../output-claim.js';
import { childProcessLauncher, type WorkerLauncher } from '../worker-host.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { SYMLINK_FIFO_FOLDER, type Planted } from '../../../test/support/planted-outputs.js';

let dir: string;
let model: string;
let donor: { engine: Buffer; manifest: string };
const services: BuildService[] = [];

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-cleanup-endings-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 5 });
  const svc = createBuildService({ outputDir: path.join(dir, 'engines') });
  services.push(svc);
  const out = path.join(dir, 'donor.engine');
  const r = await svc.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.2, simSeed: 7 } });
  expect((await svc.waitForResult(r.id)).status).toBe('succeeded');
  donor = { engine: fs.readFileSync(out), manifest: fs.readFileSync(`${out}.manifest.json`, 'utf8') };
}, 60_000);
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const planted: Planted[] = [
  SYMLINK_FIFO_FOLDER[0]!,
  {
    what: "another build's engine and manifest",
    plant: (out) => {
      fs.writeFileSync(out, donor.engine);
      fs.writeFileSync(`${out}.manifest.json`, donor.manifest);
    },
    check: (out) => {
      expect(fs.readFileSync(out).equals(donor.engine)).toBe(true);
      expect(fs.readFileSync(`${out}.manifest.json`, 'utf8')).toBe(donor.manifest);
    },
  },
  ...SYMLINK_FIFO_FOLDER.slice(1),
];

/** A service whose builds' worker pids are kept (the kill case stops one). */
function service(): { svc: BuildService; pids: number[] } {
  const pids: number[] = [];
  const launcher: WorkerLauncher = () => {
    const ch = childProcessLauncher();
    if (ch.pid !== undefined) pids.push(ch.pid);
    return ch;
  };
  // A worker that does not answer a cancel is killed 300 ms after it.
  const svc = createBuildService({ outputDir: path.join(dir, 'engines'), launcher, cancelKillMs: 300 });
  services.push(svc);
  return { svc, pids };
}

/** Resolves once the build runs a phase (the worker is past its start and wrote its temp file). */
async function running(svc: BuildService, id: string): Promise<void> {
  const t0 = Date.now();
  while ((svc.getView(id)?.rows.rows.length ?? 0) < 2 && !svc.getBuild(id)?.outcome) {
    if (Date.now() - t0 > 30_000) throw new Error(`build ${id} did not start in 30 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Ending = { how: string; options: Record<string, unknown>; expected: string[]; error?: RegExp; end?: (svc: BuildService, id: string, pid: number) => void };

const endings: Ending[] = [
  // Planted while it runs, then cancelled: the worker answers and ends cancelled.
  { how: 'a cancel', options: { simDuration: 30 }, expected: ['cancelled'], end: (svc, id) => void svc.cancelBuild(id) },
  // Planted while it runs; the worker is stopped (SIGSTOP), so the cancel goes unanswered and it
  // is killed: the service, not the worker, cleans up after it.
  {
    how: 'a kill after a cancel the worker could not answer',
    options: { simDuration: 30 },
    expected: ['cancelled'],
    error: /^the worker was killed \d+ ms after cancel/,
    end: (svc, id, pid) => {
      process.kill(pid, 'SIGSTOP');
      svc.cancelBuild(id);
    },
  },
  // Planted as it starts: it fails (the injected fault, or the native layer refusing the path
  // first, which is a failure too).
  { how: 'a failure', options: { simDuration: 1, simFault: 'fail@Timing graph nodes' }, expected: ['failed'] },
  // The worker process dies: the service cleans up after it (crashed, or failed first as above).
  { how: 'a crash', options: { simDuration: 1, simFault: 'crash@Timing graph nodes' }, expected: ['crashed', 'failed'] },
];

describe('a build that ends without succeeding leaves what it did not create', () => {
  for (const e of endings) {
    for (const p of planted) {
      it(`${e.how}: ${p.what} at the output path stays as it was`, async () => {
        const folder = fs.mkdtempSync(path.join(dir, 'out-'));
        const out = path.join(folder, 'model.engine');
        const { svc, pids } = service();
        if (!e.end) await svc.listBackends(); // its worker comes first, so pids[0] is the build's
        const rec = await svc.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simSeed: 7, ...e.options } });
        const claim = claimFile(claimDir(), path.join(fs.realpathSync(folder), 'model.engine'));
        if (e.end) {
          await running(svc, rec.id);
          expect(fs.existsSync(claim), 'the running build holds its claim').toBe(true);
          p.plant(out, folder);
          e.end(svc, rec.id, pids.at(-1)!);
        } else p.plant(out, folder);
        const fin = await svc.waitForResult(rec.id);
        expect(e.expected, JSON.stringify(fin)).toContain(fin.status);
        if (e.error) expect(fin.error).toMatch(e.error);
        // Whatever the worker still does on its way out (it is told to exit after its result) is done.
        await new Promise((r) => setTimeout(r, 300));
        p.check(out, folder);
        // Nothing else of the build's is left beside it either (no temp file), and its claim on the
        // output against builds of other processes is released (output-claim.ts).
        expect(fs.readdirSync(folder).filter((f) => f.includes('.tmp-'))).toEqual([]);
        expect(fs.existsSync(claim)).toBe(false);
      }, 60_000);
    }
  }
});
