// The desktop app's build path with everything real except Electron: the real build service, the
// real worker (dist/apps/worker/worker.js) and the real native addon with the simulated backend,
// the worker in an emulated utility process (./emulated-utility-process.ts).
import { EventEmitter } from 'node:events';
import fs, { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writeModel, tempDir } from '../../../test/support/onnx-gen.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { emulatedApp, emulatedFork, isAlive } from './emulated-utility-process.js';

vi.mock('electron', () => ({
  utilityProcess: {
    fork: () => {
      throw new Error('emulated below');
    },
  },
}));

const { createUtilityLauncher } = await import('../worker-launcher.js');
const { installQuitGuard } = await import('../quit-guard.js');
const { createBuildService } = await import('../../service/build-service.js');

const ROOT = path.resolve(__dirname, '../../..');
const WORKER = path.join(ROOT, 'dist/apps/worker/worker.js');
const ADDON = path.join(ROOT, 'build/native/Release/trt_build_studio.node');
const missing = [WORKER, ADDON].filter((p) => !existsSync(p));
if (missing.length) console.log(`[skip] utility-worker integration: ${missing.join(', ')} not built (npm run build:native && npm run build:ts)`);

const dir = tempDir('tbs-utility-');
const alive = isAlive;

describe.skipIf(missing.length > 0)('builds in an (emulated) utility process', () => {
  const model = writeModel(path.join(dir, 'model with spaces.onnx'), { layers: 12 });
  const pids: number[] = [];
  /** Runs when a worker has spawned (its pid is known from then on, as in Electron). */
  let onSpawn: ((pid: number) => void) | null = null;
  const fork = (p: string, a: string[], o: { env?: Record<string, string> }) => {
    const child = emulatedFork(p, a, o) as unknown as { pid?: number; once(e: 'spawn', cb: () => void): void };
    child.once('spawn', () => {
      pids.push(child.pid!);
      onSpawn?.(child.pid!);
    });
    return child;
  };
  const launcher = createUtilityLauncher({ workerPath: WORKER, fork: fork as never });
  const service = createBuildService({ launcher: launcher.launch, outputDir: path.join(dir, 'engines'), cancelKillMs: 3000 });

  afterAll(async () => {
    await service.shutdown();
    await launcher.killAll(2000);
  });

  it('runs a simulated build to success and leaves no worker behind', async () => {
    const record = await service.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.3, simSeed: 1 } });
    const events: BuildEvent[] = [];
    service.subscribe(record.id, (e) => events.push(...e));
    const finished = await service.waitForResult(record.id);
    expect(finished.status, finished.error).toBe('succeeded');
    expect(events.some((e) => e.type === 'phase.start')).toBe(true);
    const enginePath = service.enginePath(record.id);
    expect(enginePath && existsSync(enginePath)).toBe(true);
    await vi.waitFor(() => expect(launcher.live).toBe(0), { timeout: 5000 });
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it('reports a crashing worker as crashed, and the next build works', async () => {
    const crash = await service.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.5, simFault: 'crash' } });
    expect((await service.waitForResult(crash.id)).status).toBe('crashed');
    const next = await service.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.2 } });
    expect((await service.waitForResult(next.id)).status).toBe('succeeded');
  });

  it("removes a crashed worker's temp files, which are named by the pid Electron forgets at exit", async () => {
    const outDir = fs.mkdtempSync(path.join(dir, 'crash-'));
    const out = path.join(outDir, 'crash.engine');
    const cache = path.join(outDir, 'timing.cache');
    // The half-written files a native crash leaves (named as the native atomic writer names them).
    onSpawn = (pid) => {
      fs.writeFileSync(`${out}.tmp-${pid}-0`, 'partial engine');
      fs.writeFileSync(`${cache}.tmp-${pid}-1`, 'partial cache');
    };
    try {
      const crash = await service.startBuild({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.5, simFault: 'crash', timingCache: cache } });
      expect((await service.waitForResult(crash.id)).status).toBe('crashed');
    } finally {
      onSpawn = null;
    }
    expect(fs.readdirSync(outDir)).toEqual([]);
  });

  it("puts Electron's reason for a worker's death (child-process-gone) in the build's failure message", async () => {
    // Electron reports e.g. an out-of-memory kill only through the app event; emulate it for the
    // worker that crashes, named as the launcher named it.
    const app = new EventEmitter();
    const goneFork = (p: string, a: string[], o: { env?: Record<string, string>; serviceName?: string }) => {
      const child = emulatedFork(p, a, o) as unknown as EventEmitter;
      child.once('exit', (code: number) => {
        if (code !== 0)
          setTimeout(() => app.emit('child-process-gone', {}, { type: 'Utility', reason: 'oom', exitCode: code, serviceName: 'node.mojom.NodeService', name: o.serviceName }), 5);
      });
      return child;
    };
    const own = createUtilityLauncher({ workerPath: WORKER, fork: goneFork as never, app });
    const svc = createBuildService({ launcher: own.launch, outputDir: path.join(dir, 'engines-gone'), cancelKillMs: 3000 });
    try {
      const crash = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.5, simFault: 'crash' } });
      const result = await svc.waitForResult(crash.id);
      expect(result.status).toBe('crashed');
      expect(result.error).toMatch(/exited without a result \(signal SIGABRT\).*the worker process ran out of memory \(Electron: oom, signal SIGABRT\)/);
    } finally {
      await svc.shutdown();
      await own.killAll(2000);
    }
  });

  it("names the signal that ended a worker, never a raw status, and quotes its last stderr lines from the worker's file", async () => {
    // The simulated crash prints a line on fd 2 and aborts. In Electron (and in the emulation)
    // the pipe's listeners are gone by then: only the worker's stderr file still has the line.
    const stderrDir = path.join(dir, 'worker-stderr');
    const own = createUtilityLauncher({ workerPath: WORKER, fork: emulatedFork as never, stderrDir, app: emulatedApp });
    const svc = createBuildService({ launcher: own.launch, outputDir: path.join(dir, 'engines-stderr'), cancelKillMs: 3000 });
    try {
      const crash = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.5, simFault: 'crash' } });
      const result = await svc.waitForResult(crash.id);
      expect(result.status).toBe('crashed');
      expect(result.error).toContain('(signal SIGABRT)');
      expect(result.error).not.toMatch(/exit code (6|134)\b/);
      expect(result.error).toMatch(/last output: .*simulated crash in phase/);
      // One file per worker (the service may also start one to list backends).
      const texts = fs.readdirSync(stderrDir).map((f) => fs.readFileSync(path.join(stderrDir, f), 'utf8'));
      expect(texts.filter((t) => t.includes('simulated crash in phase'))).toHaveLength(1);
      expect(fs.statSync(stderrDir).mode & 0o777).toBe(0o700);
    } finally {
      await svc.shutdown();
      await own.killAll(2000);
    }
  });

  it('quitting mid-build cancels it with reason "shutdown" and waits for the worker to exit', async () => {
    const record = await service.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 60 } });
    const events: BuildEvent[] = [];
    service.subscribe(record.id, (e) => events.push(...e));
    await vi.waitFor(() => expect(events.some((e) => e.type === 'phase.step')).toBe(true), { timeout: 10_000 });
    const workerPid = pids.at(-1)!;
    expect(alive(workerPid)).toBe(true);

    const app = Object.assign(new EventEmitter(), {
      exited: false,
      quit() {
        const e = {
          prevented: false,
          preventDefault() {
            this.prevented = true;
          },
        };
        app.emit('before-quit', e);
        if (!e.prevented) app.exited = true;
      },
    });
    const guard = installQuitGuard({ app, service, killWorkers: () => launcher.killAll(2000), graceMs: 8000 });
    const t0 = Date.now();
    app.quit();
    expect(app.exited).toBe(false);
    await guard.done;
    expect(app.exited).toBe(true);
    const cancelling = events.find((e) => e.type === 'build.cancelling');
    expect(cancelling && cancelling.type === 'build.cancelling' && cancelling.reason).toBe('shutdown');
    expect(service.getBuild(record.id)?.state).toBe('cancelled');
    expect(alive(workerPid)).toBe(false);
    expect(launcher.live).toBe(0);
    // Cancelled at a step boundary, well before the 8 s grace that would have meant killing.
    expect(Date.now() - t0).toBeLessThan(8000);
  });
});
