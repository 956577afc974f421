// Issue 40 item 7: the limits a hostile or mistaken request used to slip past. A time budget past
// what Node's timers hold (2^31 ms) cancelled the build at once; simMemory larger than the machine
// allocated host memory until the kernel killed the worker; an empty or relative HOME or XDG
// variable put the user's state and engine store under the current folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../build-service.js';
import { MAX_TIME_BUDGET_SECONDS } from '../build-validation.js';
import { stateDir } from '../build-profiles.js';
import { defaultStoreDir } from '../engine-reuse-store.js';
import { resolveUserPath } from '../../surface/user-path.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const services: BuildService[] = [];
const savedHome = process.env.HOME;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-limits-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
});
afterEach(async () => {
  process.env.HOME = savedHome;
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function service(): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines') });
  services.push(s);
  return s;
}

describe('time budgets', () => {
  it('refuses a budget past the limit with the limit named, and a large allowed one does not cancel at once', async () => {
    const svc = service();
    // Past 2^31 ms, each a different way (generated: the limit and powers of ten above it).
    for (const budget of [MAX_TIME_BUDGET_SECONDS + 1, 2 ** 31 / 1000 + 1, 1e10, 1e300]) {
      await expect(svc.startBuild({ modelPath: model, options: { backend: 'simulated' }, timeBudgetSeconds: budget })).rejects.toThrow(
        new RegExp(`timeBudgetSeconds .* is more than the limit of ${MAX_TIME_BUDGET_SECONDS} seconds`),
      );
    }
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.3 }, timeBudgetSeconds: MAX_TIME_BUDGET_SECONDS });
    expect((await svc.waitForResult(rec.id)).status).toBe('succeeded');
  });
});

describe('simulated memory', () => {
  it('refuses simMemory above what the machine has, naming both', async () => {
    const svc = service();
    for (const simMemory of [os.totalmem() + 1, '1P']) {
      await expect(svc.startBuild({ modelPath: model, options: { backend: 'simulated', simMemory } })).rejects.toThrow(
        /simMemory \d+ bytes is more than this machine's memory \(\d+ bytes\)/,
      );
    }
  });
});

describe('user folders with HOME or XDG empty or relative', () => {
  const home = os.userInfo().homedir;
  for (const bad of ['', 'relative/home']) {
    it(`HOME=${JSON.stringify(bad)}: state, engine store and ~ are under the user's real home, never the current folder`, () => {
      process.env.HOME = bad;
      for (const xdg of ['', 'relative']) {
        const s = stateDir({ XDG_STATE_HOME: xdg });
        const c = defaultStoreDir({ XDG_CACHE_HOME: xdg });
        expect(s).toBe(path.join(home, '.local', 'state', 'trt-build-studio'));
        expect(c).toBe(path.join(home, '.cache', 'trt-build-studio', 'engines'));
      }
      expect(resolveUserPath('~/models/a.onnx')).toBe(path.join(home, 'models', 'a.onnx'));
    });
  }
});
