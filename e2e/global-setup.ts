// Generates the test models and starts the real `serve` (random port, printed token); the specs
// find both through environment variables. The returned function stops the server: SIGTERM
// makes it cancel running builds and stop its workers, so nothing is left behind.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir, writeBadFile, writeModel } from '../test/support/onnx-gen';

export interface E2eModels {
  dir: string;
  small: string;
  big: string;
  dynamic: string;
  bad: string;
}

const ROOT = path.resolve(__dirname, '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  const dir = tempDir('tbs-e2e-');
  const models: E2eModels = {
    dir,
    small: writeModel(path.join(dir, 'small.onnx'), { layers: 4 }),
    // Large enough that a build shows thousands of grouped phases and lasts a few seconds.
    big: writeModel(path.join(dir, 'resnet-like.onnx'), { layers: 300 }),
    dynamic: writeModel(path.join(dir, 'dynamic.onnx'), { layers: 4, dynamic: true }),
    bad: writeBadFile(path.join(dir, 'broken.onnx'), 'truncated'),
  };
  process.env.E2E_MODELS = JSON.stringify(models);
  fs.mkdirSync(path.join(ROOT, 'e2e', 'artifacts'), { recursive: true });

  // Engines and build profiles of this run stay in its own folder, never in the user's.
  const server = spawn(process.execPath, [path.join(ROOT, 'bin', 'trt-build-studio.js'), 'serve', '--port', '0', '--output-dir', path.join(dir, 'engines')], {
    cwd: ROOT,
    // The engine store of reuse builds: this run's own, never the user's.
    env: { ...process.env, TBS_STATE_DIR: path.join(dir, 'state'), XDG_CACHE_HOME: path.join(dir, 'cache') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // If the runner dies without calling the teardown (crash, Ctrl-C at the wrong moment), the
  // server must not outlive it.
  const killOnExit = () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stderr = '';
  server.stderr.on('data', (d) => (stderr += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve printed no URL within 20 s. stderr:\n${stderr}`)), 20_000);
    server.stdout.on('data', (d) => {
      out += String(d);
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    server.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before printing its URL. stderr:\n${stderr}`));
    });
  }).catch((e) => {
    killOnExit();
    throw e;
  });
  process.env.E2E_SERVER_URL = url;
  process.env.E2E_TOKEN = new URL(url).searchParams.get('token') ?? '';

  return async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', killOnExit);
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
