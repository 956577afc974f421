// trtBuildStudio.explainEngine through the real language server process over stdio (real build
// workers, simulated backend): a build it ran by id, a layer JSON by file:// URI with a profile, and
// bad arguments as InvalidParams. The same answer as MCP's explain_engine.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ErrorCodes, ResponseError } from 'vscode-languageserver-protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { startLsp, type LspTestClient } from './harness.js';

let dir: string;
let model: string;
let lsp: LspTestClient;

beforeAll(async () => {
  dir = tempDir('tbs-lsp-explain-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 2, extraNodes: [{ op: 'Tanh', inputs: ['probs'], outputs: ['t'] }] });
  lsp = await startLsp(['--output-dir', path.join(dir, 'engines')]);
});
afterAll(async () => {
  if (lsp) {
    await lsp.shutdown().catch(() => undefined);
    await lsp.kill();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function failure(p: Promise<unknown>): Promise<ResponseError<unknown>> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ResponseError);
    return e as ResponseError<unknown>;
  }
  throw new Error('the request succeeded, but it should have failed');
}

describe('trtBuildStudio.explainEngine', () => {
  it('a build of this server by id: checked against the fp16 it asked for; a file by URI with a profile: the slowest layers', async () => {
    const out = path.join(dir, 'm.engine');
    const result = await lsp.execute('trtBuildStudio.build', [{ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 0.3, precision: ['fp16'] } }]);
    expect(result.status).toBe('succeeded');
    const byId = await lsp.execute('trtBuildStudio.explainEngine', [{ buildId: result.buildId }]);
    expect(byId.check).toMatchObject({ expected: 'fp16', wider: [{ name: expect.stringMatching(/^tanh/i), precision: 'fp32' }] });
    expect(byId.text).toMatch(/Precision: \d+ of \d+ compute layers run FP16; 1 run FP32: tanh/i);

    const saved = JSON.parse(fs.readFileSync(`${out}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string }> };
    const profile = path.join(dir, 'p.json');
    fs.writeFileSync(profile, JSON.stringify([{ count: 1 }, ...saved.Layers.map((l, i) => ({ name: l.Name, timeMs: i === 0 ? 5 : 1, averageMs: 1, medianMs: 1, percentage: 0 }))]));
    const byFile = await lsp.execute('trtBuildStudio.explainEngine', [{ path: pathToFileURL(`${out}.layers.json`).href, profilePath: profile, slowest: 1 }]);
    expect(byFile.check).toBeUndefined();
    expect(byFile.slowest).toEqual([expect.objectContaining({ name: saved.Layers[0]!.Name, timeMs: 5 })]);
    expect(byFile.summary.totalMs).toBe(5 + (saved.Layers.length - 1));
  });

  it('bad arguments and missing files are InvalidParams naming the problem', async () => {
    const none = await failure(lsp.execute('trtBuildStudio.explainEngine', [{}]));
    expect(none.code).toBe(ErrorCodes.InvalidParams);
    expect(none.message).toMatch(/^trtBuildStudio\.explainEngine: expects \{"buildId".*give one of buildId and path/);
    const extra = await failure(lsp.execute('trtBuildStudio.explainEngine', [{ path: 'x', engine: 'y' }]));
    expect(extra.message).toMatch(/engine/);
    const missing = await failure(lsp.execute('trtBuildStudio.explainEngine', [{ path: path.join(dir, 'none.engine') }]));
    expect(missing.message).toMatch(/no layer information for .*none\.engine/);
    const unknown = await failure(lsp.execute('trtBuildStudio.explainEngine', [{ buildId: 'b0-none' }]));
    expect(unknown.message).toMatch(/unknown build "b0-none"/);
  });
});
