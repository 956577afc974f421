// Issue 40 items 2 and 3, with real workers and the addon's simulated backend. Late reads: the
// model and the timing cache replaced by FIFOs while the build runs must not hang it (the model is
// read once when the build starts; every later read opens by descriptor, O_NONBLOCK, and refuses
// what is not a regular file). Shared sticky folders: a symbolic link, FIFO or file of another user
// at the engine, manifest, cache or lock path is refused before any write, naming whose and where.
// The tests run as root; "another user" is nobody (65534), set with lchown.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../build-service.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
const services: BuildService[] = [];
const NOBODY = 65534;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-late-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function service(): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines') });
  services.push(s);
  return s;
}

function phaseStarted(svc: BuildService, id: string): Promise<void> {
  return new Promise((resolve) => {
    const sub = svc.subscribe(
      id,
      (evs) => {
        if (evs.some((e) => e.type === 'phase.start' || e.type === 'build.finished')) {
          queueMicrotask(() => sub.unsubscribe());
          resolve();
        }
      },
      { afterSeq: -1 },
    );
  });
}

describe('late reads', () => {
  for (const swap of ['model', 'timing cache', 'both'] as const) {
    it(`a FIFO swapped in for the ${swap} mid-build ends the build within seconds`, async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'fifo-'));
      const model = writeModel(path.join(folder, 'model.onnx'), { layers: 4 });
      const cache = path.join(folder, 'timing.cache');
      const svc = service();
      const rec = await svc.startBuild({
        modelPath: model,
        outputPath: path.join(folder, 'm.engine'),
        options: { backend: 'simulated', simDuration: 1.5, simSeed: 3, timingCache: cache },
      });
      await phaseStarted(svc, rec.id);
      const t0 = Date.now();
      for (const p of swap === 'both' ? [model, cache] : [swap === 'model' ? model : cache]) {
        fs.rmSync(p, { force: true });
        execFileSync('mkfifo', [p]);
      }
      const fin = await svc.waitForResult(rec.id);
      // Generous: the build itself takes 1.5 s; a hang is what this catches.
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(['succeeded', 'failed']).toContain(fin.status);
      if (fin.status === 'succeeded') {
        if (fin.manifestPath) {
          // The manifest names the model as it was read when the build started.
          const m = JSON.parse(fs.readFileSync(fin.manifestPath, 'utf8')) as { model: { sha256: string } };
          expect(m.model.sha256).toMatch(/^[0-9a-f]{64}$/);
        } else {
          // The cache after the build is a FIFO: said, not waited on.
          expect(fin.manifestError).toMatch(/is a FIFO, not a regular file/);
        }
      }
      // The FIFOs are still there: nothing replaced them.
      expect(fs.lstatSync(swap === 'timing cache' ? cache : model).isFIFO()).toBe(true);
    }, 60_000);
  }
});

describe('shared sticky folders', () => {
  const plants: Array<{ what: string; at: (out: string, cache: string) => string; make: (p: string, folder: string) => void; expect: RegExp }> = [
    {
      what: 'a symbolic link at the engine path',
      at: (out) => out,
      make: (p, f) => fs.symlinkSync(path.join(f, 'elsewhere'), p),
      expect: /output .*m\.engine is a symbolic link owned by another user/,
    },
    {
      what: 'a FIFO at the manifest path',
      at: (out) => `${out}.manifest.json`,
      make: (p) => execFileSync('mkfifo', [p]),
      expect: /manifest .*m\.engine\.manifest\.json is a FIFO owned by another user/,
    },
    { what: 'a file at the engine path', at: (out) => out, make: (p) => fs.writeFileSync(p, 'theirs'), expect: /output .*m\.engine is a file owned by another user/ },
    {
      what: 'a symbolic link at the timing cache path',
      at: (_o, c) => c,
      make: (p, f) => fs.symlinkSync(path.join(f, 'elsewhere'), p),
      expect: /timing cache .*timing\.cache is a symbolic link owned by another user/,
    },
    {
      what: "a file at the timing cache's lock path",
      at: (_o, c) => `${c}.lock`,
      make: (p) => fs.writeFileSync(p, ''),
      expect: /timing cache's lock file .*timing\.cache\.lock is a file owned by another user/,
    },
  ];
  for (const plant of plants) {
    it(`refuses ${plant.what} owned by another user, before any write`, async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'sticky-'));
      fs.chmodSync(folder, 0o1777);
      const model = writeModel(path.join(dir, `model-${path.basename(folder)}.onnx`), { layers: 3 });
      const out = path.join(folder, 'm.engine');
      const cache = path.join(folder, 'timing.cache');
      const p = plant.at(out, cache);
      plant.make(p, folder);
      fs.lchownSync(p, NOBODY, NOBODY);
      const before = fs.readdirSync(folder).sort();
      const svc = service();
      const err = await svc.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.2, timingCache: cache } }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(plant.expect);
      expect(err?.message).toMatch(new RegExp(`uid ${NOBODY}\\) in the shared sticky folder ${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(err?.message.split('\n')).toHaveLength(1);
      expect(fs.readdirSync(folder).sort()).toEqual(before);
      expect(fs.existsSync(path.join(folder, 'elsewhere'))).toBe(false);
      // The same entry owned by this user is fine to replace (no refusal of that kind).
      fs.lchownSync(p, process.getuid!(), process.getgid!());
      const again = await svc.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.2, timingCache: cache } }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(again?.message ?? '').not.toMatch(/owned by another user/);
    });
  }
});
