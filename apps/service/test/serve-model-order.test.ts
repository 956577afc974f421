// Issue 34 through `serve`, the path the web UI takes: the model is uploaded for its summary
// (POST /api/models: what the window shows, and what decides whether Build is offered), then
// built with the form's options. A model whose Cast nodes come after the nodes that read them and
// whose batch is dynamic, with no shapes given: the upload answers 201 with the summary, the
// build is accepted (201) and succeeds, and its stream carries both warnings (the nodes
// reordered; the default shape) right after build.started. Before the fix: 422 on upload.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent, ModelSummary } from '../../shared/protocol.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { openSse } from '../http/test/sse-client.js';
import { killLeftoverServers, startServe, type ServeProcess } from '../http/test/serve-process.js';

let dir: string;
let serve: ServeProcess;
beforeAll(async () => {
  dir = tempDir('tbs-serve-model-order-');
  serve = await startServe(['--output-dir', path.join(dir, 'engines')]);
});
afterAll(async () => {
  await serve?.stop();
  killLeftoverServers();
  fs.rmSync(dir, { recursive: true, force: true });
});

const api = (p: string, init: RequestInit = {}) =>
  fetch(`${serve.base}${p}`, { ...init, headers: { Authorization: `Bearer ${serve.token}`, ...(init.headers as Record<string, string>) } });

describe('serve: a model out of topological order with a dynamic batch, no shapes', () => {
  it('uploads (201, its summary), builds the upload (201, succeeded), the warnings on the stream', async () => {
    const model = writeModel(path.join(dir, 'casts-dyn.onnx'), { layers: 1, castsAtEnd: true, dynamic: true });
    const fd = new FormData();
    fd.append('model', new Blob([fs.readFileSync(model)]), 'casts-dyn.onnx');
    const up = await api('/api/models', { method: 'POST', body: fd });
    const opened = (await up.json()) as { path: string; summary: ModelSummary };
    expect(up.status, JSON.stringify(opened)).toBe(201);
    const { summary } = opened;
    expect(summary.opHistogram.Cast).toBe(2);
    expect(summary.dynamicInputs).toEqual([{ name: 'input', dims: ['batch', 'height', 'width'] }]);

    const res = await api('/api/builds', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ modelPath: opened.path, options: { backend: 'simulated', simDuration: 0.3 } }),
    });
    const created = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(created)).toBe(201);
    const sse = await openSse(`${serve.base}/api/builds/${created.id}/events?lastEventId=-1`, { Authorization: `Bearer ${serve.token}` });
    await sse.ended;
    const list = sse.events() as BuildEvent[];
    expect(list.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    // The warnings take the seqs after build.started; the worker's events follow them, in order.
    expect(list.slice(0, 3).map((e) => e.seq)).toEqual([0, 1, 2]);
    list.slice(1).forEach((e, i) => expect(e.seq).toBeGreaterThan(list[i].seq));
    expect(list.slice(1, 3)).toEqual([
      expect.objectContaining({ type: 'log', severity: 'warning', message: expect.stringMatching(/^the nodes are not in topological order .*they were reordered$/) }),
      expect.objectContaining({
        type: 'log',
        severity: 'warning',
        message: expect.stringMatching(/^dynamic input "input" \[batch, 3, height, width\] was given no shapes: built for input: 1x3x1x1 /),
      }),
    ]);
  }, 60_000);
});
