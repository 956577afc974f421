// `trt-build-studio mcp` under signals, as a client's process manager sends them: the real
// command (bin → dist), real build workers, real signals. First signal: cancel builds and shut
// down; a second while that shutdown waits: kill the workers by PID and exit; any later one, or
// one during start-up: never killed by the signal, never a worker left.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, killLiveClis, leftoverMarked, processesMarked, ProcessMarks, spawnCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { signalStorm, until } from '../../../test/support/signal-storm.js';
import { isAlive } from './harness.js';

let dir: string;
let model: string;
const marks = new ProcessMarks();

beforeAll(() => {
  dir = tempDir('tbs-mcp-signals-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 4 });
});
afterEach(() => {
  killLiveClis();
  marks.killAll();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface McpProcess {
  child: ChildProcess;
  done: Promise<CliResult>;
  mark: string;
  outDir: string;
  stderr(): string;
  request(method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: unknown }>;
  /** Processes of this server other than itself: its build workers. */
  workers(): number[];
}

function startMcp(name: string): McpProcess {
  const outDir = fs.mkdtempSync(path.join(dir, `${name}-`));
  const mark = marks.next();
  const child = spawnCli(['mcp', '--output-dir', outDir], { env: { ...process.env, [mark]: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = collect(child);
  const replies = new Map<number, (m: { result?: Record<string, unknown>; error?: unknown }) => void>();
  readline.createInterface({ input: child.stdout! }).on('line', (l) => {
    const msg = JSON.parse(l);
    if (typeof msg.id === 'number' && !msg.method) replies.get(msg.id)?.(msg);
  });
  let nextId = 1;
  return {
    child,
    done,
    mark,
    outDir,
    stderr: () => stderr,
    request(method, params) {
      const id = nextId++;
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((resolve) => replies.set(id, resolve));
    },
    workers: () => processesMarked(mark).filter((p) => p !== child.pid),
  };
}

/** Initializes the session and starts a long build; resolves once its worker runs a phase. */
async function runningBuild(s: McpProcess): Promise<{ id: string; workers: number[] }> {
  const init = await s.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'signals', version: '1' } });
  expect(init.error).toBeUndefined();
  s.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const started = await s.request('tools/call', {
    name: 'start_build',
    arguments: { modelPath: model, outputPath: path.join(s.outDir, 'm.engine'), options: { backend: 'simulated', simDuration: 30 } },
  });
  const id = (started.result?.structuredContent as { buildId: string }).buildId;
  const t0 = Date.now();
  for (;;) {
    const r = await s.request('tools/call', { name: 'get_build', arguments: { id } });
    const state = (r.result?.structuredContent as { state: string }).state;
    if (state === 'running' && s.workers().length > 0) break;
    if (Date.now() - t0 > 20_000) throw new Error(`the build did not start running (state ${state}): ${s.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { id, workers: s.workers() };
}

describe('mcp: a second signal forces the shutdown', () => {
  it('while the shutdown waits on a worker that cannot answer: kills it by PID, exits 0 in seconds, nothing left', async () => {
    const s = startMcp('force');
    const { workers } = await runningBuild(s);
    // A stopped worker reads no cancel: the graceful shutdown would wait for the service's
    // 10 s kill timer. The second signal must not wait for it.
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    s.child.kill('SIGTERM');
    await until('the graceful shutdown to begin', () => /SIGTERM: cancelling running builds/.test(s.stderr()));
    await new Promise((r) => setTimeout(r, 500));
    expect(s.child.exitCode, 'still waiting on the stopped worker').toBeNull();
    const t0 = Date.now();
    s.child.kill('SIGINT');
    const r = await s.done;
    expect({ code: r.code, signal: r.signal }, s.stderr()).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(s.stderr()).toMatch(new RegExp(`SIGINT again: killed the build workers now \\(pids [^)]*${workers[0]}`));
    expect(workers.filter(isAlive)).toEqual([]);
    expect(await leftoverMarked(s.mark)).toEqual([]);
    expect(fs.readdirSync(s.outDir)).toEqual([]);
  }, 60_000);

  it('stdin closed, then a signal while the shutdown waits: the signal forces it', async () => {
    const s = startMcp('eof-force');
    const { workers } = await runningBuild(s);
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    s.child.stdin!.end();
    await until('the graceful shutdown to begin', () => /stdin closed: cancelling running builds/.test(s.stderr()));
    s.child.kill('SIGTERM');
    const r = await s.done;
    expect({ code: r.code, signal: r.signal }, s.stderr()).toEqual({ code: 0, signal: null });
    expect(s.stderr()).toMatch(/SIGTERM again: killed the build workers now/);
    expect(await leftoverMarked(s.mark)).toEqual([]);
    expect(fs.readdirSync(s.outDir)).toEqual([]);
  }, 60_000);
});

describe('mcp: storms of signals', () => {
  it('during a running build: exits 0, never by a signal, no worker, no engine', async () => {
    const s = startMcp('storm');
    await runningBuild(s);
    const sent = signalStorm(s.child, ['SIGTERM', 'SIGINT']);
    const r = await s.done;
    expect({ code: r.code, signal: r.signal }, s.stderr()).toEqual({ code: 0, signal: null });
    expect(sent()).toBeGreaterThan(0);
    expect(await leftoverMarked(s.mark)).toEqual([]);
    expect(fs.readdirSync(s.outDir)).toEqual([]);
  }, 60_000);

  it('from the spawn: exits 0, or by the signal only before any of its code ran', async () => {
    let handled = 0;
    // 'answered': the last storm starts once the server answered initialize, so at least one
    // meets it running however long Node's start takes on a busy machine (it passed 400 ms there).
    for (const delayMs of [0, 40, 80, 150, 250, 400, 'answered'] as const) {
      const s = startMcp(`spawn-${delayMs}`);
      await new Promise((r) => s.child.once('spawn', r));
      if (delayMs === 'answered') await s.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'signals', version: '1' } });
      else await new Promise((r) => setTimeout(r, delayMs));
      signalStorm(s.child, ['SIGINT', 'SIGTERM'], 2);
      const r = await s.done;
      expect(await leftoverMarked(s.mark)).toEqual([]);
      if (r.signal !== null) {
        expect(s.stderr(), `killed by ${r.signal} after ${delayMs} ms`).toBe('');
        continue;
      }
      expect(r.code, s.stderr()).toBe(0);
      handled++;
    }
    expect(handled, 'storms that met the server running').toBeGreaterThan(0);
  }, 120_000);
});
