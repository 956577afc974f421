// Uploads through the HTTP API as the web UI makes them: names up to the display-name limit (255
// characters) build through to an engine on disk (the engine's default name is shortened to fit the
// file system's 255 bytes with the temp suffix), and a model an upload cannot carry is refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuildService, type BuildService } from '../../build-service.js';
import { createHttpServer, type BuildHttpServer } from '../server.js';
import { requireBuilt } from '../../../../test/support/cli.js';
import { makeModel, tempDir } from '../../../../test/support/onnx-gen.js';
import { shortHash } from '../../../shared/engine-name.js';

const TOKEN = 'long-names-token-0123456789';
const auth = { Authorization: `Bearer ${TOKEN}` };

let dir: string;
let engines: string;
let svc: BuildService;
let server: BuildHttpServer;
let base: string;

beforeAll(async () => {
  requireBuilt();
  dir = tempDir('tbs-http-long-names-');
  process.env.TBS_STATE_DIR = path.join(dir, 'state');
  engines = path.join(dir, 'engines');
  fs.mkdirSync(path.join(dir, 'uploads'));
  svc = createBuildService({ outputDir: engines });
  server = createHttpServer({ service: svc, token: TOKEN, uploadDir: path.join(dir, 'uploads'), heartbeatMs: 1000 });
  base = `http://127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
});
afterAll(async () => {
  await server?.close();
  await svc?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function uploadAndBuild(fileName: string): Promise<{ outputPath: string; status: string; error?: string }> {
  const form = new FormData();
  form.append('model', new Blob([makeModel({ layers: 3 })]), fileName);
  const up = await fetch(`${base}/api/models`, { method: 'POST', headers: auth, body: form });
  expect(up.status).toBe(201);
  const { path: modelPath, fileName: shown } = (await up.json()) as { path: string; fileName: string };
  expect(shown).toBe(fileName);
  const res = await fetch(`${base}/api/builds`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ modelPath, options: { backend: 'simulated', simDuration: 0.2, simSeed: 1 } }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const result = await svc.waitForResult(id);
  return { outputPath: svc.getBuild(id)!.outputPath!, status: result.status, error: result.error };
}

/** The name the engine should get: the stem cut to what fits, then "-" and 8 hex of its hash. */
function expectedName(stem: string, keepChars: number, ext: string): string {
  const hash = shortHash(stem);
  return `${Array.from(stem).slice(0, keepChars).join('')}-${hash}${ext}`;
}

describe('uploads with long names', () => {
  it('245 ASCII characters and 100 CJK characters build, and their engines are on disk', async () => {
    const backend = (await svc.listBackends()).find((b) => b.name === 'simulated')!;
    const ext = `.sim.${backend.emulates ?? backend.version}.engine`;
    // 255 bytes, less 36 for the longest temp suffix ".tmp-<pid>-<n>", less the extension, less "-<hash>".
    const room = 255 - 36 - Buffer.byteLength(ext) - 9;
    const ascii = 'a'.repeat(245);
    const cjk = '模'.repeat(100);
    for (const [stem, keep] of [
      [ascii, room],
      [cjk, Math.floor(room / 3)],
    ] as const) {
      const built = await uploadAndBuild(`${stem}.onnx`);
      expect(built.error).toBeUndefined();
      expect(built.status).toBe('succeeded');
      expect(built.outputPath).toBe(path.join(engines, expectedName(stem, keep, ext)));
      expect(fs.readFileSync(built.outputPath).subarray(0, 20).toString()).toBe('TRT-BUILD-STUDIO SIM');
    }
    // Nothing half-written is left: the two engines and no temp files.
    expect(fs.readdirSync(engines).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // Two engines, each with its manifest and layer information beside it (docs/engines.md).
    expect(fs.readdirSync(engines).filter((f) => f.endsWith('.engine'))).toHaveLength(2);
    expect(fs.readdirSync(engines).filter((f) => f.endsWith('.engine.manifest.json'))).toHaveLength(2);
  });
});

describe('uploads of models with external data', () => {
  it('are refused at once, naming the data file and what to do instead; nothing is kept', async () => {
    const bytes = makeModel({ layers: 2, externalData: 'weights.bin' });
    const before = fs.readdirSync(path.join(dir, 'uploads')).sort();
    for (const url of ['/api/models', '/api/builds']) {
      const form = new FormData();
      form.append('model', new Blob([bytes]), 'big model.onnx');
      if (url === '/api/builds') form.append('options', JSON.stringify({ backend: 'simulated' }));
      const res = await fetch(`${base}${url}`, { method: 'POST', headers: auth, body: form });
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, body.error.message).toBeGreaterThanOrEqual(400);
      expect(body.error.code).toBe('bad_model');
      expect(body.error.message).toMatch(/^"big model\.onnx" keeps its weights in an external data file \(weights\.bin\).*open the model by its path/);
    }
    expect(fs.readdirSync(path.join(dir, 'uploads')).sort()).toEqual(before);
  });
});
