// A farm worker loads what a remote client names, so it accepts plugin libraries only from its
// operator's --plugin-dir folders (none without one). The refusal comes from the worker that would
// load the library (serve loads no code and does not know the workers' folders: docs/farm.md,
// Security): the build ends failed at once, with the message naming the option and the allowed
// folders, and is not retried elsewhere. Real redis-server, real `worker` processes (dist/), the
// simulated backend, which checks the files but loads nothing (a real dlopen needs TensorRT).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { SharedFolderArtifacts } from '../artifacts.js';
import type { FarmRecord } from '../farm-store.js';
import { QueueBuildService } from '../queue-service.js';
import { rmDir, startRedis, startWorker, stopAll, type RedisServer } from './harness.js';

let dir: string;
let model: string;
let redis: RedisServer;
let artifacts: SharedFolderArtifacts;
let svc: QueueBuildService;
let trusted: string;
let inside: string;
let outsideLib: string;

beforeAll(async () => {
  dir = tempDir('tbs-farm-plugins-');
  fs.mkdirSync(path.join(dir, 'redis'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
  artifacts = new SharedFolderArtifacts(path.join(dir, 'artifacts'));
  artifacts.ensure();
  trusted = path.join(dir, 'plugins');
  fs.mkdirSync(trusted);
  inside = path.join(trusted, 'libgood.so');
  fs.writeFileSync(inside, 'not really a library: the simulated backend does not load it');
  outsideLib = path.join(dir, 'libevil.so');
  fs.writeFileSync(outsideLib, 'x');
  // A link inside the folder that leads out of it.
  fs.symlinkSync(outsideLib, path.join(trusted, 'libescape.so'));
  redis = await startRedis(path.join(dir, 'redis'));
  svc = await QueueBuildService.create({ url: redis.url, artifacts, checkMs: 250, heartbeatTtlMs: 1500, log: () => undefined });
  const art = ['--artifacts', artifacts.root];
  await Promise.all([startWorker(redis.url, 'plugTrusting', 'gpu=PLUG', [...art, '--plugin-dir', trusted]), startWorker(redis.url, 'plugNone', 'gpu=NOPLUG', art)]);
}, 60_000);

afterAll(async () => {
  await svc?.shutdown().catch(() => undefined);
  await stopAll();
  if (dir) rmDir(dir);
});

const sim = { backend: 'simulated' as const, simDuration: 0.3, simSeed: 2 };

async function build(gpu: string, plugins: Record<string, string[]>) {
  // retries: 2 — a refusal must not bounce to another attempt.
  const rec = await svc.startBuild({ modelPath: model, options: { ...sim, ...plugins }, target: { gpu }, retries: 2 });
  const f = await svc.waitForResult(rec.id);
  return { f, rec: svc.getBuild(rec.id) as FarmRecord };
}

describe('farm worker: plugin libraries only from its --plugin-dir folders', () => {
  it('a library inside the folder is accepted and the build succeeds', async () => {
    const { f } = await build('PLUG', { staticPlugins: [inside] });
    expect(f.status, JSON.stringify(f)).toBe('succeeded');
  }, 60_000);

  it('a library outside the folder is refused by the worker: failed, naming the option and the allowed folder, not retried', async () => {
    const { f, rec } = await build('PLUG', { staticPlugins: [outsideLib] });
    expect(f.status).toBe('failed');
    expect(f.error).toBe(`staticPlugins[0]: ${outsideLib} is not inside a plugin folder of this service (allowed: ${trusted}); its operator names them with --plugin-dir`);
    expect(rec.farm.attempt).toBe(1);
  }, 60_000);

  it('a symlink or ".." out of the folder is refused', async () => {
    const link = await build('PLUG', { dynamicPlugins: [path.join(trusted, 'libescape.so')] });
    expect(link.f.status).toBe('failed');
    expect(link.f.error).toMatch(/^dynamicPlugins\[0\]: .*libescape\.so resolves to .*libevil\.so, outside the plugin folders of this service/);
    const dots = await build('PLUG', { pluginsToSerialize: [`${trusted}/../libevil.so`] });
    expect(dots.f.status).toBe('failed');
    expect(dots.f.error).toMatch(/^pluginsToSerialize\[0\]: .*libevil\.so is not inside a plugin folder of this service/);
  }, 60_000);

  it("a worker started without --plugin-dir loads none, even one in another worker's folder", async () => {
    const { f, rec } = await build('NOPLUG', { staticPlugins: [inside] });
    expect(f.status).toBe('failed');
    expect(f.error).toMatch(/^staticPlugins\[0\]: this service loads no plugin libraries: start it with --plugin-dir <folder>/);
    expect(rec.farm.attempt).toBe(1);
  }, 60_000);
});
