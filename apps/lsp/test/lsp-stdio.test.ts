// The language server as an editor sees it: a JSON-RPC client (vscode-languageserver-protocol) on
// the real server process over stdio, real build workers running the simulated backend, real files.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CancellationTokenSource, ErrorCodes, LSPErrorCodes, ResponseError, WorkDoneProgressCancelNotification } from 'vscode-languageserver-protocol/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectedSummary, tempDir, writeBadFile, writeModel } from '../../../test/support/onnx-gen.js';
import { childPids, isAlive, startLsp, waitFor, type LspTestClient, type ProgressValue } from './harness.js';

let dir: string;
let small: string;
let dyn: string;
let lsp: LspTestClient;
const extra: LspTestClient[] = [];

beforeAll(async () => {
  dir = tempDir('tbs-lsp-');
  small = writeModel(path.join(dir, 'small modèle.onnx'), { layers: 4 });
  dyn = writeModel(path.join(dir, 'dyn.onnx'), { dynamic: true, layers: 2 });
  lsp = await startLsp(['--heartbeat', '0.5', '--output-dir', path.join(dir, 'engines')]);
});

afterEach(async () => {
  for (const c of extra.splice(0)) await c.kill();
});

afterAll(async () => {
  if (lsp) {
    await lsp.shutdown().catch(() => undefined);
    await lsp.kill();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const sim = (more: Record<string, unknown> = {}) => ({ backend: 'simulated', simDuration: 1.2, simSeed: 5, ...more });

async function failure(p: Promise<unknown>): Promise<ResponseError<any>> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ResponseError);
    return e as ResponseError<any>;
  }
  throw new Error('the request succeeded, but it should have failed');
}

function kinds(values: ProgressValue[]): string[] {
  return values.map((v) => v.kind);
}

describe('initialize', () => {
  it('advertises the seven commands and work-done progress for them', () => {
    expect(lsp.init.capabilities.executeCommandProvider?.commands).toEqual([
      'trtBuildStudio.build',
      'trtBuildStudio.cancel',
      'trtBuildStudio.listBuilds',
      'trtBuildStudio.inspect',
      'trtBuildStudio.backends',
      'trtBuildStudio.checkEngine',
      'trtBuildStudio.explainEngine',
    ]);
    expect(lsp.init.capabilities.executeCommandProvider?.workDoneProgress).toBe(true);
    expect(lsp.init.serverInfo?.name).toBe('trt-build-studio');
  });
});

describe('trtBuildStudio.build', () => {
  it('reports begin, rising reports and end on the client token, and resolves with the result', async () => {
    const out = path.join(dir, 'small.engine');
    const token = 'client-token-1';
    lsp.watch(token);
    const viewsBefore = lsp.notifications.length;
    const result = await lsp.execute(
      'trtBuildStudio.build',
      [{ modelPath: small, outputPath: out, options: sim({ simDuration: 2, timingCache: path.join(dir, 'small.cache') }) }],
      { workDoneToken: token },
    );
    expect(result.status).toBe('succeeded');
    // The engine's manifest is beside it, and the check command says it fits here.
    const fits = await lsp.execute('trtBuildStudio.checkEngine', [{ enginePath: out, options: sim({ simDuration: 2, timingCache: path.join(dir, 'small.cache') }) }]);
    expect(fits).toMatchObject({ verdict: 'fits', engine: out, reasons: [], missing: [] });
    const other = await lsp.execute('trtBuildStudio.checkEngine', [{ enginePath: `file://${out}`, options: sim({ optLevel: 0 }) }]);
    expect(other).toMatchObject({ verdict: 'rebuild', reasons: [{ kind: 'option', what: 'option optLevel', was: '3', now: '0' }] });
    const bad = await failure(lsp.execute('trtBuildStudio.checkEngine', [{ engine: out }]));
    expect(bad.message).toMatch(/expects \{"enginePath"/);
    expect(result.outputPath).toBe(out);
    expect(fs.statSync(out).size).toBe(result.engineBytes);
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.timingCache?.entriesAfter).toBeGreaterThan(0);
    expect(result.phases.phaseCount).toBeGreaterThan(3);
    expect(result.message).toMatch(/succeeded in .* bytes written to/);

    const values = lsp.progress.get(token)!;
    expect(values[0]).toMatchObject({ kind: 'begin', cancellable: true });
    expect((values[0] as { title: string }).title).toContain('small modèle.onnx');
    expect(values.at(-1)).toMatchObject({ kind: 'end' });
    expect((values.at(-1) as { message: string }).message).toBe(result.message);
    expect(kinds(values).filter((k) => k === 'begin' || k === 'end')).toEqual(['begin', 'end']);
    const reports = values.filter((v) => v.kind === 'report') as Array<ProgressValue & { percentage?: number; message?: string }>;
    expect(reports.length).toBeGreaterThan(3);
    const pct = reports.map((r) => r.percentage!);
    for (let i = 1; i < pct.length; i++) expect(pct[i], `report ${i} of ${pct.join(',')}`).toBeGreaterThanOrEqual(pct[i - 1]);
    expect(pct.at(-1)).toBe(100);
    // Somewhere in the middle the bar moved and did not yet claim completion.
    expect(pct.some((p) => p > 0 && p < 100)).toBe(true);
    const mid = reports.slice(0, -1).map((r) => r.message ?? '');
    expect(mid.some((m) => m.includes(' › ') && /last TensorRT callback [\d.]+ (ms|s|min)/.test(m))).toBe(true);
    // Throttled: a few per second, not one per callback.
    const spanS = (values.at(-1)!.at - values[0].at) / 1000;
    expect(reports.length / Math.max(spanS, 0.5)).toBeLessThan(10);

    const views = lsp.notifications.slice(viewsBefore).filter((n) => n.method === 'trtBuildStudio/buildView' && n.params.buildId === result.buildId);
    expect(views.length).toBeGreaterThan(1);
    const last = views.at(-1)!.params;
    expect(last.outcome).toMatchObject({ status: 'succeeded', outputPath: out });
    expect(last.percentage).toBe(100);
    expect(last.rows.length).toBeGreaterThan(2);
    expect(last.rows[0].path).toHaveLength(1);
    expect(last.cache?.entriesAfter).toBe(result.timingCache.entriesAfter);
    expect(views.some((v) => v.params.currentPath.length > 0 && v.params.outcome === undefined)).toBe(true);
  });

  it('asks the client for a token with window/workDoneProgress/create when none is given', async () => {
    const before = lsp.created.length;
    const result = await lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: path.join(dir, 'created.engine'), options: sim() }]);
    expect(result.status).toBe('succeeded');
    expect(lsp.created.length).toBe(before + 1);
    const values = lsp.progress.get(lsp.created.at(-1)!)!;
    expect(values[0].kind).toBe('begin');
    expect(values.at(-1)!.kind).toBe('end');
  });

  it('keeps reporting through a silent stretch, and window/workDoneProgress/cancel stops the build for real', async () => {
    const out = path.join(dir, 'hang.engine');
    const token = 'client-token-hang';
    lsp.watch(token);
    const pending = lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30, simFault: 'hang' }) }], {
      workDoneToken: token,
    });
    const values = lsp.progress.get(token)!;
    // Heartbeats every 0.5 s while the builder says nothing: several "still building" reports.
    await waitFor(
      'heartbeat reports in the silent stretch',
      () => values.filter((v) => v.kind === 'report' && /still building/.test((v as { message?: string }).message ?? '')).length >= 3 || undefined,
      20_000,
    );
    const workers = childPids(lsp.pid);
    expect(workers.length).toBeGreaterThan(0);
    const sentAt = Date.now();
    await lsp.connection.sendNotification(WorkDoneProgressCancelNotification.type, { token });
    const result = await pending;
    const tookMs = Date.now() - sentAt;
    expect(result.status).toBe('cancelled');
    expect(result.cancelReason).toBe('user');
    expect(result.message).toMatch(/no engine was written/);
    expect(tookMs).toBeLessThan(5_000);
    expect(fs.existsSync(out)).toBe(false);
    expect(values.at(-1)).toMatchObject({ kind: 'end' });
    expect((values.at(-1) as { message: string }).message).toMatch(/cancelled/);
    // The worker of that build is gone (the service starts a fresh one per build).
    await waitFor('the build worker to exit', () => workers.every((w) => !isAlive(w)) || undefined, 15_000);
  });

  it('$/cancelRequest cancels the build; the request fails with RequestCancelled and the result as data', async () => {
    const out = path.join(dir, 'cancel-request.engine');
    const source = new CancellationTokenSource();
    const token = 'client-token-cancel-request';
    lsp.watch(token);
    const pending = failure(
      lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30 }) }], { workDoneToken: token, token: source.token }),
    );
    const values = lsp.progress.get(token)!;
    await waitFor('the build to report a phase', () => values.some((v) => v.kind === 'report' && (v as { message?: string }).message?.includes(' › ')) || undefined, 20_000);
    const sentAt = Date.now();
    source.cancel();
    const err = await pending;
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    expect(err.code).toBe(LSPErrorCodes.RequestCancelled);
    expect(err.message).toMatch(/^trtBuildStudio\.build: Build .* cancelled/);
    expect(err.data).toMatchObject({ status: 'cancelled', cancelReason: 'user' });
    expect(err.data.cancelLatencyMs).toBeLessThan(2_000);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a build waiting behind another says so, and can be cancelled while it waits', async () => {
    const first = 'client-token-first';
    const second = 'client-token-second';
    lsp.watch(first);
    lsp.watch(second);
    const a = lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: path.join(dir, 'a.engine'), options: sim({ simDuration: 30 }) }], { workDoneToken: first });
    await waitFor('the first build to run', () => lsp.progress.get(first)!.some((v) => v.kind === 'report') || undefined, 20_000);
    const b = lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: path.join(dir, 'b.engine'), options: sim() }], { workDoneToken: second });
    const values = lsp.progress.get(second)!;
    await waitFor('the queued report', () => values.find((v) => v.kind === 'report'));
    expect(values[0]).toMatchObject({ kind: 'begin', message: 'queued behind an earlier build' });
    expect((values[1] as { message: string }).message).toMatch(/^queued for [\d.]+ m?s: waiting for an earlier build/);
    await lsp.connection.sendNotification(WorkDoneProgressCancelNotification.type, { token: second });
    const rb = await b;
    expect(rb.status).toBe('cancelled');
    expect(fs.existsSync(path.join(dir, 'b.engine'))).toBe(false);
    // The first build was not touched by the second one's cancel.
    expect(lsp.progress.get(first)!.some((v) => v.kind === 'end')).toBe(false);
    await lsp.execute('trtBuildStudio.cancel', [{}]);
    expect((await a).status).toBe('cancelled');
  });

  it('a crashed build fails with the crash site', async () => {
    const out = path.join(dir, 'crash.engine');
    const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simFault: 'crash@Timing graph nodes' }) }]));
    expect(err.code).toBe(LSPErrorCodes.RequestFailed);
    expect(err.data.status).toBe('crashed');
    // Where it died, from the record the worker's native layer kept (the deepest phase last).
    expect(err.data.lastPhasePath.at(-1)).toBe('Timing graph nodes');
    expect(err.message).toContain(`crashed in ${err.data.lastPhasePath.join(' › ')}`);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('bad requests: a clear error, diagnostics on the model, and the server carries on', () => {
  it('unknown command', async () => {
    const err = await failure(lsp.execute('trtBuildStudio.explode', []));
    expect(err.code).toBe(ErrorCodes.InvalidParams);
    expect(err.message).toContain('unknown command "trtBuildStudio.explode"');
  });

  it('missing and malformed arguments name the field', async () => {
    const none = await failure(lsp.execute('trtBuildStudio.build', undefined));
    expect(none.code).toBe(ErrorCodes.InvalidParams);
    expect(none.message).toContain('modelPath');
    const wrongType = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: 42 }]));
    expect(wrongType.message).toMatch(/modelPath: .*string/i);
    const misspelt = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: small, options: { optlevel: 3 } }]));
    expect(misspelt.code).toBe(ErrorCodes.InvalidParams);
    expect(misspelt.message).toContain('optlevel');
    const badCancel = await failure(lsp.execute('trtBuildStudio.cancel', [{ buildId: 'b-nope' }]));
    expect(badCancel.message).toContain('no running build "b-nope"');
    const badInspect = await failure(lsp.execute('trtBuildStudio.inspect', [{}]));
    expect(badInspect.message).toContain('path');
  });

  it('an output path that is a FIFO or a device: InvalidParams, the node untouched; a text timing cache is named, never quoted', async () => {
    const fifo = path.join(dir, 'lsp-out.fifo');
    execFileSync('mkfifo', [fifo]);
    const before = fs.lstatSync(fifo);
    for (const out of [fifo, '/dev/null']) {
      const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim() }]));
      expect(err.code).toBe(ErrorCodes.InvalidParams);
      expect(err.message).toMatch(/is a (FIFO \(named pipe\)|character device), not a regular file; it is left untouched/);
    }
    expect(fs.lstatSync(fifo)).toMatchObject({ ino: before.ino, mtimeMs: before.mtimeMs });
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    const secret = 'api_key = sk-live-0123456789abcdef\npassword = hunter2-correct-horse\n';
    const cache = path.join(dir, 'credentials.ini');
    fs.writeFileSync(cache, secret);
    const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: path.join(dir, 'x.engine'), options: sim({ timingCache: cache }) }]));
    expect(err.code).toBe(ErrorCodes.InvalidParams);
    expect(err.message).toMatch(/credentials\.ini is not a timing cache: it looks like a text file/);
    for (const piece of ['api_key', 'sk-live', '0123456789abcdef', 'password', 'hunter2', 'correct-horse']) expect(err.message).not.toContain(piece);
  });

  it('a file that does not exist', async () => {
    const missing = path.join(dir, 'nope.onnx');
    const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: missing, options: sim() }]));
    expect(err.message).toContain(`model file not found: ${missing}`);
  });

  it('a file that is not ONNX: RequestFailed and a diagnostic on its URI', async () => {
    const text = writeBadFile(path.join(dir, 'notes.onnx'), 'text');
    const before = lsp.diagnostics.length;
    const tokensBefore = lsp.created.length;
    const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: text, options: sim() }]));
    // A build that never started gets no progress token (and so no begin/end to show).
    expect(lsp.created.length).toBe(tokensBefore);
    expect(err.code).toBe(LSPErrorCodes.RequestFailed);
    expect(err.message).toContain('is not an ONNX model');
    const d = await waitFor('diagnostics', () => lsp.diagnostics.slice(before).find((p) => p.uri.endsWith('/notes.onnx')));
    expect(d.uri).toMatch(/^file:\/\//);
    expect(d.diagnostics[0]).toMatchObject({ source: 'trt-build-studio', code: 'bad-model', range: { start: { line: 0, character: 0 } } });
    expect(d.diagnostics[0].message).toContain('is not an ONNX model');
  });

  // Issue 34: a dynamic input given no shapes builds as trtexec builds it (each dynamic dimension
  // 1); bad shapes still make the diagnostic.
  it('shapes of the wrong rank: the diagnostic names the input; a good build clears it', async () => {
    const before = lsp.diagnostics.length;
    const err = await failure(lsp.execute('trtBuildStudio.build', [{ modelPath: dyn, options: sim({ shapes: ['input:1x3x224/1x3x224/1x3x224'] }) }]));
    expect(err.code).toBe(LSPErrorCodes.RequestFailed);
    expect(err.message).toContain('"input"');
    const d = await waitFor('diagnostics', () => lsp.diagnostics.slice(before).find((p) => p.uri.endsWith('/dyn.onnx') && p.diagnostics.length > 0));
    expect(d.diagnostics[0].code).toBe('shapes');
    expect(d.diagnostics[0].message).toMatch(/shapes for "input" have the wrong rank/);

    const ok = await lsp.execute('trtBuildStudio.build', [
      { modelPath: dyn, outputPath: path.join(dir, 'dyn.engine'), options: sim({ shapes: ['input:1x3x224x224/4x3x224x224/8x3x224x224'] }) },
    ]);
    expect(ok.status).toBe('succeeded');
    const cleared = lsp.diagnostics.filter((p) => p.uri === d.uri).at(-1)!;
    expect(cleared.diagnostics).toEqual([]);
    // No shapes at all: built with each dynamic dimension 1, as trtexec builds it.
    const plain = await lsp.execute('trtBuildStudio.build', [{ modelPath: dyn, outputPath: path.join(dir, 'dyn-default.engine'), options: sim() }]);
    expect(plain.status).toBe('succeeded');
  });

  it('still answers after all of that', async () => {
    const b = await lsp.execute('trtBuildStudio.backends', []);
    expect(b.backends.map((x: { name: string }) => x.name)).toContain('simulated');
    const summary = await lsp.execute('trtBuildStudio.inspect', [{ path: small }]);
    const want = expectedSummary({ layers: 4 });
    expect(summary.nodeCount).toBe(want.nodeCount);
    expect(summary.inputs[0].name).toBe('input');
  });
});

describe('trtBuildStudio.cancel', () => {
  it('without a buildId cancels every running build of this server', async () => {
    const out = path.join(dir, 'cancel-all.engine');
    const token = 'client-token-cancel-all';
    lsp.watch(token);
    const pending = lsp.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30 }) }], { workDoneToken: token });
    await waitFor('the build to start', () => lsp.progress.get(token)!.some((v) => v.kind === 'report') || undefined);
    const r = await lsp.execute('trtBuildStudio.cancel', [{}]);
    expect(r.cancelled).toHaveLength(1);
    const result = await pending;
    expect(result.status).toBe('cancelled');
    expect(result.buildId).toBe(r.cancelled[0]);
    expect(fs.existsSync(out)).toBe(false);
    const none = await lsp.execute('trtBuildStudio.cancel', []);
    expect(none).toEqual({ cancelled: [], message: 'no running build to cancel' });
  });
});

describe('clients without window.workDoneProgress', () => {
  it('are never asked to create a token; the build and its buildView still work', async () => {
    const c = await startLsp(['--output-dir', path.join(dir, 'engines')], { workDoneProgress: false });
    extra.push(c);
    const result = await c.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: path.join(dir, 'noprogress.engine'), options: sim() }]);
    expect(result.status).toBe('succeeded');
    expect(c.created).toEqual([]);
    expect(c.notifications.some((n) => n.method === 'trtBuildStudio/buildView' && n.params.outcome?.status === 'succeeded')).toBe(true);
    expect(await c.shutdown()).toBe(0);
  });
});

describe('ending the server during a build', () => {
  it('shutdown + exit cancels the build and leaves no worker and no engine', async () => {
    const c = await startLsp(['--output-dir', path.join(dir, 'engines')]);
    extra.push(c);
    const out = path.join(dir, 'shutdown.engine');
    const pending = c.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30 }) }]).catch((e) => e);
    const workers = await waitFor('a build worker', () => (childPids(c.pid).length ? childPids(c.pid) : undefined));
    await waitFor('the build to report', () => [...c.progress.values()].some((v) => v.some((x) => x.kind === 'report')) || undefined);
    const code = await c.shutdown();
    expect(code).toBe(0);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(fs.existsSync(out)).toBe(false);
    const settled = await pending;
    // The response may or may not have made it out before exit; if it did, it says why.
    if (settled && typeof settled === 'object' && 'status' in settled) expect(settled.status).toBe('cancelled');
  });

  it('exit without shutdown still leaves no worker and no engine', async () => {
    const c = await startLsp(['--output-dir', path.join(dir, 'engines')]);
    extra.push(c);
    const out = path.join(dir, 'exit.engine');
    void c.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30 }) }]).catch(() => undefined);
    const workers = await waitFor('a build worker', () => (childPids(c.pid).length ? childPids(c.pid) : undefined));
    await c.connection.sendNotification('exit');
    await waitFor('the server to exit', () => !isAlive(c.pid) || undefined, 20_000);
    // The worker notices its host is gone, cancels, and exits on its own.
    await waitFor('the orphaned worker to stop', () => workers.every((w) => !isAlive(w)) || undefined, 20_000);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a closed stdin ends the server without orphan workers', async () => {
    const c = await startLsp(['--output-dir', path.join(dir, 'engines')]);
    extra.push(c);
    const out = path.join(dir, 'stdin.engine');
    void c.execute('trtBuildStudio.build', [{ modelPath: small, outputPath: out, options: sim({ simDuration: 30 }) }]).catch(() => undefined);
    const workers = await waitFor('a build worker', () => (childPids(c.pid).length ? childPids(c.pid) : undefined));
    c.child.stdin!.end();
    await waitFor('the server to exit', () => !isAlive(c.pid) || undefined, 20_000);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(fs.existsSync(out)).toBe(false);
  });
});
