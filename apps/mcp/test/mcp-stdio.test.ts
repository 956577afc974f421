// The MCP server as an agent runtime sees it: the official SDK client over a real stdio transport,
// the real server process, real build workers running the simulated backend, real files.
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CallToolResultSchema, McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedSummary, tempDir, writeBadFile, writeModel } from '../../../test/support/onnx-gen.js';
import type { BuildResultOut, BuildStateOut } from '../../surface/schemas.js';
import { childPids, isAlive, startServer, waitFor, type RunningServer } from './harness.js';

const FINAL = new Set(['succeeded', 'cancelled', 'failed', 'crashed']);
const BUILD_ID_META = 'trt-build-studio/buildId';

let dir: string;
let small: string;
let dyn: string;
let srv: RunningServer;

beforeAll(async () => {
  dir = tempDir('tbs-mcp-');
  // A path with a space and non-ASCII characters, as users' model folders have.
  small = writeModel(path.join(dir, 'small modèle.onnx'), { layers: 4 });
  dyn = writeModel(path.join(dir, 'dyn.onnx'), { dynamic: true, layers: 2 });
  srv = await startServer(['--heartbeat', '1', '--output-dir', path.join(dir, 'engines')]);
});

afterAll(async () => {
  await srv?.close();
  if (srv) await waitFor('the server to exit', () => !isAlive(srv.pid) || undefined, 10_000);
  fs.rmSync(dir, { recursive: true, force: true });
});

const sim = (extra: Record<string, unknown> = {}) => ({ backend: 'simulated', simDuration: 1.2, simSeed: 3, ...extra });

function textOf(res: { content?: unknown }): string {
  return ((res.content as Array<{ type: string; text?: string }>) ?? []).map((c) => c.text ?? '').join('\n');
}

async function getBuild(id: string): Promise<BuildStateOut> {
  const r = await srv.client.callTool({ name: 'get_build', arguments: { id } });
  expect(r.isError, textOf(r)).toBeFalsy();
  return r.structuredContent as BuildStateOut;
}

function expectRising(updates: Progress[]): void {
  for (let i = 1; i < updates.length; i++) expect(updates[i].progress, `notification ${i}`).toBeGreaterThan(updates[i - 1].progress);
}

describe('MCP server over stdio', () => {
  it('lists its tools with input and output schemas', async () => {
    const { tools } = await srv.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      'build_engine',
      'cancel_build',
      'check_engine',
      'explain_engine',
      'get_build',
      'inspect_model',
      'list_backends',
      'list_builds',
      'start_build',
    ]);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.description, t.name).toBeTruthy();
    }
    const build = byName.get('build_engine')!;
    expect(build.inputSchema.required).toEqual(['modelPath']);
    const options = (build.inputSchema.properties as Record<string, { properties?: Record<string, unknown> }>).options;
    expect(Object.keys(options.properties ?? {})).toEqual(expect.arrayContaining(['backend', 'timingCache', 'optLevel', 'workspaceMiB', 'shapes', 'simDuration', 'simFault']));
    expect(Object.keys(build.outputSchema?.properties ?? {})).toEqual(expect.arrayContaining(['status', 'durationMs', 'cancelLatencyMs', 'engineBytes', 'timingCache', 'phases']));
  });

  it('lists backends, the simulated one available', async () => {
    const r = await srv.client.callTool({ name: 'list_backends', arguments: {} });
    const { backends } = r.structuredContent as { backends: Array<{ name: string; available: boolean }> };
    expect(backends.find((b) => b.name === 'simulated')?.available).toBe(true);
    expect(backends.map((b) => b.name)).toContain('tensorrt');
  });

  it('inspects a generated model', async () => {
    const r = await srv.client.callTool({ name: 'inspect_model', arguments: { path: dyn } });
    expect(r.isError, textOf(r)).toBeFalsy();
    const s = r.structuredContent as { nodeCount: number; opHistogram: Record<string, number>; dynamicInputs: Array<{ name: string; dims: string[] }> };
    const expected = expectedSummary({ dynamic: true, layers: 2 });
    expect(s.nodeCount).toBe(expected.nodeCount);
    expect(s.opHistogram).toEqual(expected.opHistogram);
    expect(s.dynamicInputs).toEqual([{ name: 'input', dims: ['batch', 'height', 'width'] }]);
  });

  it('builds with progress notifications that rise, name phases and end with the result', async () => {
    const out = path.join(dir, 'out', 'small.engine');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const cache = path.join(dir, 'timing.cache');
    const updates: Progress[] = [];
    const r = await srv.client.callTool({ name: 'build_engine', arguments: { modelPath: small, outputPath: out, options: sim({ timingCache: cache }) } }, undefined, {
      onprogress: (p) => updates.push(p),
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const res = r.structuredContent as BuildResultOut;
    expect(res.status).toBe('succeeded');
    expect(res.simulated).toBe(true);
    expect(fs.statSync(out).size).toBe(res.engineBytes);
    expect(res.outputPath).toBe(out);
    expect(res.timingCache?.path).toBe(cache);
    expect(res.timingCache?.entriesAfter).toBeGreaterThan(0);
    expect(res.phases.slowest[0].path).toBe('Building engine');
    expect(res.phases.slowest.length).toBeGreaterThan(3);
    expect(res.phases.slowest.some((p) => p.path.includes(' › Timing graph nodes'))).toBe(true);

    expect(updates.length).toBeGreaterThanOrEqual(3);
    expectRising(updates);
    // The amount of work is unknown until the engine exists: no total before the last notification.
    expect(updates.slice(0, -1).every((u) => u.total === undefined)).toBe(true);
    // ≤ ~4 per second over the build, plus the first and the last.
    expect(updates.length).toBeLessThanOrEqual(Math.ceil((res.durationMs / 1000) * 4) + 3);
    const phaseLines = updates.filter((u) =>
      /^Building engine \d+\/6( › [^·]+)? \d+\/\d+ · last TensorRT callback [\d.]+ m?s ago( \([^)]*\))?( · about .*)?$/.test(u.message ?? ''),
    );
    expect(phaseLines.length, updates.map((u) => u.message).join('\n')).toBeGreaterThan(0);
    // The last notification repeats the result. The server pauses between the two writes, but a
    // loaded client can still read both at once and drop the notification (SDK issue #2580).
    const last = updates.at(-1)?.message === res.message ? updates.at(-1) : srv.lateProgress().find((p) => p._meta?.[BUILD_ID_META] === res.buildId);
    expect(last?.message).toBe(res.message);
    expect(last?.total).toBe(last?.progress);
    expect(last!.progress).toBeGreaterThan(updates.filter((u) => u !== last).at(-1)!.progress);
    expect(last!.progress).toBeGreaterThanOrEqual(res.phases.phaseCount);
    expect(updates.every((u) => (u._meta as Record<string, unknown>)?.[BUILD_ID_META] === res.buildId)).toBe(true);
    if (process.env.MCP_CAPTURE) fs.writeFileSync(process.env.MCP_CAPTURE, JSON.stringify({ updates, result: res }, null, 2));

    const state = await getBuild(res.buildId);
    expect(state).toMatchObject({ state: 'succeeded', engineAvailable: true, outcome: { status: 'succeeded', engineBytes: res.engineBytes } });
  });

  it('reports timing-cache figures: a second build of the same model hits the cache', async () => {
    const cache = path.join(dir, 'timing.cache'); // written by the build above
    const r = await srv.client.callTool({
      name: 'build_engine',
      arguments: { modelPath: small, outputPath: path.join(dir, 'warm.engine'), options: sim({ timingCache: cache, simDuration: 0.5 }) },
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const tc = (r.structuredContent as BuildResultOut).timingCache!;
    expect(tc.entriesBefore).toBeGreaterThan(0);
    expect(tc.hits).toBeGreaterThan(0);
    expect(tc.entriesAfter).toBe(tc.entriesBefore + tc.added);
  });

  it('builds on with a corrupt timing-cache file and says so', async () => {
    const cache = path.join(dir, 'corrupt.cache');
    fs.writeFileSync(cache, Buffer.concat([Buffer.from('TBSSIMTC'), crypto.randomBytes(200)]));
    const r = await srv.client.callTool({
      name: 'build_engine',
      arguments: { modelPath: small, outputPath: path.join(dir, 'corrupt-cache.engine'), options: sim({ timingCache: cache, simDuration: 0.3 }) },
    });
    expect(r.isError, textOf(r)).toBeFalsy();
    const res = r.structuredContent as BuildResultOut;
    expect(res.status).toBe('succeeded');
    expect(res.timingCache?.warning).toMatch(/corrupt/);
    expect(res.message).toContain(`Timing cache: ${res.timingCache?.warning}`);
  });

  it('cancels the build when the request is cancelled, leaving no engine', async () => {
    const out = path.join(dir, 'cancelled.engine');
    const ac = new AbortController();
    const updates: Progress[] = [];
    let buildId: string | undefined;
    const call = srv.client.callTool(
      { name: 'build_engine', arguments: { modelPath: small, outputPath: out, options: sim({ simDuration: 30, simFault: 'hang@Timing graph nodes' }) } },
      undefined,
      {
        signal: ac.signal,
        onprogress: (p) => {
          updates.push(p);
          buildId ??= (p._meta as Record<string, string> | undefined)?.[BUILD_ID_META];
          if (/Timing graph nodes/.test(p.message ?? '')) ac.abort('the test cancels');
        },
      },
    );
    await expect(call).rejects.toThrow();
    const id = await waitFor('a build id in the progress notifications', () => buildId);
    const abortedAt = Date.now();
    const final = await waitFor('the build to end', async () => {
      const s = await getBuild(id);
      return FINAL.has(s.state) ? s : undefined;
    });
    expect(final.state).toBe('cancelled');
    expect(final.cancelReason).toBe('user');
    expect(final.outcome?.status).toBe('cancelled');
    expect(final.message).toContain("cancelled at the caller's request");
    // A hang of up to 60 s was interrupted: the cancel did not wait for the step to end by itself.
    expect(Date.now() - abortedAt).toBeLessThan(5000);
    expect(final.outcome!.durationMs).toBeLessThan(20_000);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('cancelled.engine'))).toEqual([]);
    expectRising(updates);
  });

  it('cancels with reason timeout when the time budget runs out, and says so', async () => {
    const out = path.join(dir, 'budget.engine');
    const updates: Progress[] = [];
    const t0 = Date.now();
    const r = await srv.client.callTool(
      {
        name: 'build_engine',
        // A short build that hangs early: the budget runs out during the hang, a silent stretch.
        // The budget counts from the call, worker start included, and that start alone took 1.5 s
        // on a busy 2-core machine, leaving a 2.5 s budget a hang shorter than one 1 s heartbeat
        // plus its lateness. 6 s leaves a hang of several heartbeats however slow the start.
        arguments: { modelPath: small, outputPath: out, options: sim({ simDuration: 1, simFault: 'hang@Timing graph nodes' }), timeBudgetSeconds: 6 },
      },
      undefined,
      { onprogress: (p) => updates.push(p) },
    );
    expect(r.isError, textOf(r)).toBeFalsy();
    const res = r.structuredContent as BuildResultOut;
    expect(res.status).toBe('cancelled');
    expect(res.cancelReason).toBe('timeout');
    expect(res.message).toContain('time budget of 6s exhausted');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(6000);
    // The budget, not the hang's own end (60 s), stopped it: well under that, with room for a busy machine.
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(fs.existsSync(out)).toBe(false);
    // The hang is a silent stretch: heartbeats keep coming, each saying how long TensorRT has been quiet.
    const beats = updates.filter((u) => /^still building: Building engine.* · last TensorRT callback [\d.]+ m?s ago( \([^)]*\))?( · about .*)?$/.test(u.message ?? ''));
    expect(beats.length, updates.map((u) => u.message).join('\n')).toBeGreaterThan(0);
    expect(updates.some((u) => /^stopping \(time budget exhausted\)/.test(u.message ?? ''))).toBe(true);
    expectRising(updates);
    expect(updates.every((u) => u.total === undefined)).toBe(true);
    if (process.env.MCP_CAPTURE) fs.writeFileSync(`${process.env.MCP_CAPTURE}.budget.json`, JSON.stringify({ updates, result: res }, null, 2));
  });

  it("keeps a silent build's request alive with heartbeats when progress resets the client timeout", async () => {
    // 2 s client timeout, a hang far longer than that: only heartbeats (every 1 s here) arrive.
    const r = await srv.client.callTool(
      {
        name: 'build_engine',
        arguments: { modelPath: small, outputPath: path.join(dir, 'alive.engine'), options: sim({ simFault: 'hang@Timing graph nodes' }), timeBudgetSeconds: 4 },
      },
      undefined,
      { onprogress: () => {}, timeout: 2000, resetTimeoutOnProgress: true },
    );
    // The call outlived its 2 s timeout and ended by the server's budget, not the client's clock.
    expect(r.structuredContent).toMatchObject({ status: 'cancelled', cancelReason: 'timeout' });
  });

  it('reports a crashed worker as a tool error, and the next call works', async () => {
    const out = path.join(dir, 'crash.engine');
    const r = await srv.client.callTool({
      name: 'build_engine',
      arguments: { modelPath: small, outputPath: out, options: sim({ simFault: 'crash@Optimizing graph' }) },
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/^Build \S+ crashed after [\d.]+ m?s( \(crashed in [^)]*\))?, its worker process died \(.*SIGABRT.*\); the server is still running/);
    expect((r.structuredContent as BuildResultOut).status).toBe('crashed');
    expect(fs.existsSync(out)).toBe(false);

    const next = await srv.client.callTool({
      name: 'build_engine',
      arguments: { modelPath: small, outputPath: path.join(dir, 'after-crash.engine'), options: sim({ simDuration: 0.3 }) },
    });
    expect(next.isError, textOf(next)).toBeFalsy();
    expect((next.structuredContent as BuildResultOut).status).toBe('succeeded');
  });

  it("reports a failed build as a tool error with the backend's reason", async () => {
    const r = await srv.client.callTool({
      name: 'build_engine',
      arguments: { modelPath: small, outputPath: path.join(dir, 'fail.engine'), options: sim({ simFault: 'fail@Computing profile costs' }) },
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/failed after .*simulated failure in phase "Computing profile costs"/);
  });

  it('rejects bad arguments with messages that name the problem', async () => {
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await srv.client.callTool({ name, arguments: args });
      expect(r.isError, `${name} ${JSON.stringify(args)} should fail`).toBe(true);
      return textOf(r);
    };
    // Arguments that do not fit the tool are a protocol error: -32602 with one line.
    const invalid = async (name: string, args: unknown) => {
      const e = await srv.client.request({ method: 'tools/call', params: { name, arguments: args } } as never, CallToolResultSchema).then(
        () => undefined,
        (err: McpError) => err,
      );
      expect(e, `${name} ${JSON.stringify(args)} should be -32602`).toBeInstanceOf(McpError);
      expect(e!.code).toBe(-32602);
      expect(e!.message).not.toMatch(/\n/);
      return e!.message;
    };
    expect(await invalid('build_engine', null)).toMatch(/Invalid arguments for tool build_engine: "arguments" must be an object, got null/);
    expect(await invalid('build_engine', {})).toMatch(/modelPath/);
    expect(await invalid('build_engine', { modelPath: small, options: { optLevel: 9 } })).toMatch(/options\.optLevel: .*<=5/);
    expect(await invalid('build_engine', { modelPath: small, options: { optlevel: 3 } })).toMatch(/Unrecognized key: "optlevel"/);
    expect(await invalid('build_engine', { modelPath: small, options: { shapes: ['input:1x3/x'] } })).toMatch(/options\.shapes: invalid shape/);
    expect(await invalid('build_engine', { modelPath: small, timeBudgetSeconds: -1 })).toMatch(/timeBudgetSeconds/);
    // Well-formed arguments naming something wrong in the world are tool errors.
    expect(await call('build_engine', { modelPath: path.join(dir, 'missing.onnx') })).toMatch(/missing\.onnx/);
    // An output path that may not be written is an invalid argument too, and is left untouched.
    expect(await invalid('build_engine', { modelPath: small, outputPath: path.join(dir, 'no-such-dir', 'x.engine'), options: sim() })).toMatch(/no-such-dir/);
    const fifo = path.join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const before = fs.lstatSync(fifo);
    expect(await invalid('build_engine', { modelPath: small, outputPath: fifo, options: sim() })).toMatch(
      /out\.fifo is a FIFO \(named pipe\), not a regular file; it is left untouched/,
    );
    expect(await invalid('start_build', { modelPath: small, outputPath: '/dev/null', options: sim() })).toMatch(/\/dev\/null is a character device/);
    expect(fs.lstatSync(fifo)).toMatchObject({ ino: before.ino, mtimeMs: before.mtimeMs, size: 0 });
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    // Issue 34: no shapes at all builds as trtexec does (each dynamic dimension 1); bad ones are a tool error.
    const dynMsg = await call('build_engine', { modelPath: dyn, options: sim({ shapes: ['input:1x3x8/1x3x8/1x3x8'] }) });
    expect(dynMsg).toMatch(/shapes for "input" have the wrong rank/);
    expect(dynMsg).toMatch(/batch/);
    expect(await call('inspect_model', { path: writeBadFile(path.join(dir, 'bad.onnx'), 'text') })).toMatch(/bad\.onnx/);
    expect(await call('inspect_model', { path: dir })).toMatch(/director/i);
    expect(await call('get_build', { id: 'no-such-build' })).toMatch(/No build with id "no-such-build"/);
    expect(await call('cancel_build', { id: 'no-such-build' })).toMatch(/No build with id "no-such-build"/);
    // The server is still there.
    const r = await srv.client.callTool({ name: 'list_builds', arguments: {} });
    expect((r.structuredContent as { builds: unknown[] }).builds.length).toBeGreaterThan(0);
  });

  it('lets a polling agent cancel by id with cancel_build', async () => {
    const out = path.join(dir, 'polled.engine');
    let buildId: string | undefined;
    const call = srv.client.callTool(
      { name: 'build_engine', arguments: { modelPath: small, outputPath: out, options: sim({ simDuration: 30, simFault: 'hang@Timing graph nodes' }) } },
      undefined,
      { onprogress: (p) => (buildId ??= (p._meta as Record<string, string> | undefined)?.[BUILD_ID_META]) },
    );
    const id = await waitFor('a build id', () => buildId);
    const running = await waitFor('the build to run', async () => {
      const s = await getBuild(id);
      return s.state === 'running' && s.currentPhase ? s : undefined;
    });
    expect(running.message).toMatch(/is running \(.* so far, at Building engine/);
    const c = await srv.client.callTool({ name: 'cancel_build', arguments: { id } });
    expect(c.structuredContent).toMatchObject({ buildId: id, accepted: true });
    const r = await call;
    expect((r.structuredContent as BuildResultOut).status).toBe('cancelled');
    expect((r.structuredContent as BuildResultOut).cancelReason).toBe('user');
    expect(fs.existsSync(out)).toBe(false);
    const again = await srv.client.callTool({ name: 'cancel_build', arguments: { id } });
    expect(again.structuredContent).toMatchObject({ accepted: false, state: 'cancelled' });
  });
});

describe('MCP server for polling agents', () => {
  it('starts a build without waiting, then get_build follows it to the engine', async () => {
    const out = path.join(dir, 'polled-ok.engine');
    const t0 = Date.now();
    const r = await srv.client.callTool({ name: 'start_build', arguments: { modelPath: small, outputPath: out, options: sim({ simDuration: 1 }) } });
    expect(r.isError, textOf(r)).toBeFalsy();
    const started = r.structuredContent as { buildId: string; state: string; message: string };
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(['queued', 'running']).toContain(started.state);
    expect(started.message).toContain(`get_build with id "${started.buildId}"`);
    const seen = new Set<string>();
    const final = await waitFor('the build to end', async () => {
      const s = await getBuild(started.buildId);
      seen.add(s.state);
      return FINAL.has(s.state) ? s : undefined;
    });
    expect(seen.has('running')).toBe(true);
    expect(final).toMatchObject({ state: 'succeeded', engineAvailable: true, outputPath: out });
    expect(fs.statSync(out).size).toBe(final.outcome?.engineBytes);
  });

  it('records why a started build was cancelled: its time budget', async () => {
    const out = path.join(dir, 'polled-budget.engine');
    const r = await srv.client.callTool({
      name: 'start_build',
      arguments: { modelPath: small, outputPath: out, options: sim({ simFault: 'hang@Timing graph nodes' }), timeBudgetSeconds: 1 },
    });
    const { buildId } = r.structuredContent as { buildId: string };
    const final = await waitFor('the build to end', async () => {
      const s = await getBuild(buildId);
      return FINAL.has(s.state) ? s : undefined;
    });
    expect(final).toMatchObject({ state: 'cancelled', cancelReason: 'timeout' });
    expect(final.message).toContain('time budget exhausted');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('rejects bad options for start_build like build_engine does', async () => {
    const e = await srv.client.callTool({ name: 'start_build', arguments: { modelPath: small, options: { optLevel: -1 } } }).then(
      () => undefined,
      (err: McpError) => err,
    );
    expect(e).toBeInstanceOf(McpError);
    expect(e!.code).toBe(-32602);
    expect(e!.message).toMatch(/Invalid arguments for tool start_build: .*options\.optLevel/);
  });
});

describe('MCP server queueing', () => {
  it('tells the agent a build is queued behind another, then runs it', async () => {
    const first: Progress[] = [];
    const second: Progress[] = [];
    const run = (name: string, updates: Progress[]) =>
      srv.client.callTool({ name: 'build_engine', arguments: { modelPath: small, outputPath: path.join(dir, `${name}.engine`), options: sim({ simDuration: 0.8 }) } }, undefined, {
        onprogress: (p) => updates.push(p),
      });
    const a = run('queue-a', first);
    await waitFor('the first build to report', () => first.length > 0 || undefined);
    const b = run('queue-b', second);
    const [ra, rb] = await Promise.all([a, b]);
    expect((ra.structuredContent as BuildResultOut).status).toBe('succeeded');
    expect((rb.structuredContent as BuildResultOut).status).toBe('succeeded');
    expect(second[0].message).toMatch(/^queued for [\d.]+ m?s: waiting for an earlier build/);
    expect(second.some((u) => /^Building engine/.test(u.message ?? ''))).toBe(true);
    expectRising(second);
  });
});

describe('MCP server queueing, cancelled while waiting', () => {
  it('cancels a queued build without ever starting it', async () => {
    let firstRunning = false;
    const first = srv.client.callTool(
      { name: 'build_engine', arguments: { modelPath: small, outputPath: path.join(dir, 'queue-c.engine'), options: sim({ simDuration: 0.8 }) } },
      undefined,
      { onprogress: (p) => (firstRunning ||= !/^queued/.test(p.message ?? '')) },
    );
    // Validation is asynchronous: only once the first build runs is the second sure to queue.
    await waitFor('the first build to run', () => firstRunning || undefined);
    const ac = new AbortController();
    let id: string | undefined;
    let queuedSeen = false;
    const second = srv.client.callTool(
      { name: 'build_engine', arguments: { modelPath: small, outputPath: path.join(dir, 'queue-d.engine'), options: sim({ simDuration: 0.8 }) } },
      undefined,
      {
        signal: ac.signal,
        onprogress: (p) => {
          id ??= (p._meta as Record<string, string> | undefined)?.[BUILD_ID_META];
          if (/^queued for /.test(p.message ?? '')) {
            queuedSeen = true;
            ac.abort();
          }
        },
      },
    );
    await expect(second).rejects.toThrow();
    expect(queuedSeen).toBe(true);
    const state = await waitFor('the queued build to end', async () => {
      const s = await getBuild(id!);
      return FINAL.has(s.state) ? s : undefined;
    });
    expect(state.state).toBe('cancelled');
    expect(state.startedAt).toBeUndefined();
    expect(fs.existsSync(path.join(dir, 'queue-d.engine'))).toBe(false);
    expect(((await first).structuredContent as BuildResultOut).status).toBe('succeeded');
  });
});

describe('MCP server through the package command', () => {
  it('runs as `trt-build-studio mcp` and exits promptly when the client leaves', async () => {
    const s = await startServer([], [path.resolve('bin/trt-build-studio.js'), 'mcp']);
    const r = await s.client.callTool({ name: 'inspect_model', arguments: { path: small } });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect((r.structuredContent as { fileName: string }).fileName).toBe('small modèle.onnx');
    const t0 = Date.now();
    await s.close();
    await waitFor('the server to exit', () => !isAlive(s.pid) || undefined, 10_000);
    // The SDK client would send SIGTERM after 2 s: exiting before that means stdin's end was enough.
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe('MCP server shutdown', () => {
  it('on SIGTERM cancels the running build and leaves no worker behind', async () => {
    const s = await startServer(['--output-dir', path.join(dir, 'engines')]);
    let seen = false;
    const call = s.client.callTool(
      {
        name: 'build_engine',
        arguments: { modelPath: small, outputPath: path.join(dir, 'sigterm.engine'), options: sim({ simDuration: 30, simFault: 'hang@Timing graph nodes' }) },
      },
      undefined,
      { onprogress: (p) => (seen ||= /Building engine/.test(p.message ?? '')) },
    );
    call.catch(() => {}); // the connection goes away with the server
    await waitFor('the build to start', () => seen || undefined);
    const workers = childPids(s.pid);
    expect(workers.length).toBeGreaterThan(0);
    process.kill(s.pid, 'SIGTERM');
    await waitFor('the server to exit', () => !isAlive(s.pid) || undefined, 15_000);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(s.stderr()).toMatch(/SIGTERM: cancelling running builds/);
    expect(fs.existsSync(path.join(dir, 'sigterm.engine'))).toBe(false);
    await s.close();
  });

  it('exits when stdin closes, without orphan workers', async () => {
    const s = await startServer();
    let seen = false;
    const call = s.client.callTool(
      { name: 'build_engine', arguments: { modelPath: small, outputPath: path.join(dir, 'eof.engine'), options: sim({ simDuration: 30, simFault: 'hang@Timing graph nodes' }) } },
      undefined,
      { onprogress: (p) => (seen ||= /Building engine/.test(p.message ?? '')) },
    );
    call.catch(() => {});
    await waitFor('the build to start', () => seen || undefined);
    const workers = childPids(s.pid);
    expect(workers.length).toBeGreaterThan(0);
    const t0 = Date.now();
    await s.close(); // ends stdin; the SDK sends SIGTERM only after 2 s
    await waitFor('the server to exit', () => !isAlive(s.pid) || undefined, 15_000);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(s.stderr()).toMatch(/stdin closed: cancelling running builds/);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
