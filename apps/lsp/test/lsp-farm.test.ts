// The language server on a build farm (`lsp --queue`), as an editor sees it: a real redis-server,
// real farm worker processes with the simulated backend, the real server process over stdio. The
// build command takes a target (one build on a matching machine) and targets (a matrix: one build
// per target, each reported with its target, one work-done progress for all, cancel stops all), as
// MCP's build_matrix does; a language server that builds locally refuses both.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CancellationTokenSource, ErrorCodes, LSPErrorCodes, ResponseError } from 'vscode-languageserver-protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { rmDir, startRedis, startWorker, stopAll, type RedisServer } from '../../farm/test/harness.js';
import { startLsp, waitFor, type LspTestClient } from './harness.js';

let dir: string;
let model: string;
let redis: RedisServer;
let farm: LspTestClient;
let local: LspTestClient;

const sim = (simDuration: number) => ({ backend: 'simulated', simDuration, simSeed: 7 });

async function failure(p: Promise<unknown>): Promise<ResponseError<any>> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ResponseError);
    return e as ResponseError<any>;
  }
  throw new Error('the request succeeded, but it should have failed');
}

beforeAll(async () => {
  dir = tempDir('tbs-lsp-farm-');
  fs.mkdirSync(path.join(dir, 'redis'));
  fs.mkdirSync(path.join(dir, 'artifacts'));
  model = writeModel(path.join(dir, 'artifacts', 'model.onnx'), { layers: 4 });
  redis = await startRedis(path.join(dir, 'redis'));
  const art = ['--artifacts', path.join(dir, 'artifacts')];
  await Promise.all([startWorker(redis.url, 'wL4', 'gpu=L4,trt=10.16.0', art), startWorker(redis.url, 'wA100', 'gpu=A100,trt=10.16.0', art)]);
  [farm, local] = await Promise.all([startLsp(['--queue', redis.url]), startLsp(['--output-dir', path.join(dir, 'engines')])]);
}, 90_000);

afterAll(async () => {
  for (const c of [farm, local]) {
    if (!c) continue;
    await c.shutdown().catch(() => undefined);
    await c.kill();
  }
  await stopAll();
  if (dir) rmDir(dir);
});

describe('trtBuildStudio.build on a build farm', () => {
  it('targets: one build per target, each reported with its target; one progress for all, a report per ending', async () => {
    const token = 'farm-matrix-1';
    farm.watch(token);
    const targets = [{ gpu: 'L4' }, { gpu: 'A100' }];
    const r = await farm.execute('trtBuildStudio.build', [{ modelPath: model, options: sim(0.4), targets }], { workDoneToken: token });
    expect(r).toMatchObject({ succeeded: 2, total: 2, modelPath: model });
    expect(r.buildIds).toHaveLength(2);
    expect(r.builds.map((b: { target: unknown }) => b.target)).toEqual(targets);
    for (const b of r.builds) {
      expect(b.status).toBe('succeeded');
      // Each engine went to the farm's artifact folder, one per build.
      expect(fs.statSync(b.outputPath).size).toBe(b.engineBytes);
    }
    expect(new Set(r.builds.map((b: { outputPath: string }) => b.outputPath)).size).toBe(2);
    expect(r.message).toBe('2 of 2 builds succeeded: gpu=L4 succeeded; gpu=A100 succeeded');
    const values = farm.progress.get(token)!;
    expect(values[0]).toMatchObject({ kind: 'begin', cancellable: true, percentage: 0 });
    expect((values[0] as { title: string }).title).toBe('TensorRT matrix: model.onnx (2 targets)');
    const reports = values.filter((v) => v.kind === 'report') as Array<{ message: string; percentage: number }>;
    expect(reports.map((x) => x.percentage)).toEqual([50, 100]);
    expect(reports[0].message).toMatch(/^1 of 2 ended: gpu=(L4|A100) succeeded$/);
    expect(values.at(-1)).toMatchObject({ kind: 'end', message: r.message });
  });

  it('a single build takes a target and runs on a machine that has it', async () => {
    const ok = await farm.execute('trtBuildStudio.build', [{ modelPath: model, options: sim(0.3), target: { gpu: 'A100' } }]);
    expect(ok.status).toBe('succeeded');
  });

  it('cancelling the request stops every build of the matrix; the request fails RequestCancelled with all of them', async () => {
    const source = new CancellationTokenSource();
    const token = 'farm-matrix-cancel';
    farm.watch(token);
    const pending = failure(
      farm.execute('trtBuildStudio.build', [{ modelPath: model, options: sim(60), targets: [{ gpu: 'L4' }, { gpu: 'V100' }] }], { workDoneToken: token, token: source.token }),
    );
    await waitFor('the matrix to begin', () => farm.progress.get(token)!.some((v) => v.kind === 'begin') || undefined, 20_000);
    // Let the L4 build start (the V100 one waits: no such worker).
    await new Promise((r) => setTimeout(r, 1500));
    source.cancel();
    const err = await pending;
    expect(err.code).toBe(LSPErrorCodes.RequestCancelled);
    expect(err.data.builds.map((b: { status: string }) => b.status)).toEqual(['cancelled', 'cancelled']);
    expect(err.data.builds.map((b: { target: unknown }) => b.target)).toEqual([{ gpu: 'L4' }, { gpu: 'V100' }]);
    expect(err.message).toMatch(/0 of 2 builds succeeded: gpu=L4 cancelled; gpu=V100 cancelled/);
  }, 60_000);

  it('bad matrices are InvalidParams, naming the field', async () => {
    const both = await failure(farm.execute('trtBuildStudio.build', [{ modelPath: model, targets: [{ gpu: 'L4' }], target: { gpu: 'L4' } }]));
    expect(both.code).toBe(ErrorCodes.InvalidParams);
    expect(both.message).toMatch(/either target or targets/);
    const out = await failure(farm.execute('trtBuildStudio.build', [{ modelPath: model, targets: [{ gpu: 'L4' }], outputPath: path.join(dir, 'x.engine') }]));
    expect(out.message).toMatch(/outputPath: a matrix writes one engine per target/);
    const empty = await failure(farm.execute('trtBuildStudio.build', [{ modelPath: model, targets: [] }]));
    expect(empty.code).toBe(ErrorCodes.InvalidParams);
    expect(empty.message).toMatch(/targets/);
  });
});

describe('trtBuildStudio.build without a farm', () => {
  it('refuses target and targets, saying how to give it a farm', async () => {
    const m = await failure(local.execute('trtBuildStudio.build', [{ modelPath: model, options: sim(0.2), targets: [{ gpu: 'L4' }] }]));
    expect(m.code).toBe(ErrorCodes.InvalidParams);
    expect(m.message).toBe('trtBuildStudio.build: targets: only a build farm routes builds (start the language server with --queue redis://host:port)');
    const t = await failure(local.execute('trtBuildStudio.build', [{ modelPath: model, options: sim(0.2), target: { gpu: 'L4' } }]));
    expect(t.message).toMatch(/target: only a build farm routes builds \(start the language server with --queue/);
  });
});
