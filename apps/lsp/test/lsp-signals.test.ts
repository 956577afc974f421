// `trt-build-studio lsp` under signals, as an editor or its process manager sends them: the real
// command (bin → dist), a real JSON-RPC client, real build workers, real signals. First signal:
// cancel builds and shut down; a second while that shutdown waits: kill the workers by PID and
// exit; any later one, or one during start-up: never killed by the signal, never a worker left,
// never an engine file.
import type { ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createProtocolConnection,
  ExecuteCommandRequest,
  InitializeRequest,
  InitializedNotification,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, killLiveClis, leftoverMarked, processesMarked, ProcessMarks, spawnCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { signalStorm, until } from '../../../test/support/signal-storm.js';
import { isAlive } from './harness.js';

let dir: string;
let model: string;
const marks = new ProcessMarks();
const connections: ProtocolConnection[] = [];

beforeAll(() => {
  dir = tempDir('tbs-lsp-signals-');
  model = writeModel(path.join(dir, 'm.onnx'), { layers: 4 });
});
afterEach(() => {
  for (const c of connections.splice(0)) c.dispose();
  killLiveClis();
  marks.killAll();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface LspProcess {
  child: ChildProcess;
  done: Promise<CliResult>;
  mark: string;
  outDir: string;
  connection: ProtocolConnection;
  stderr(): string;
  /** Processes of this server other than itself: its build workers. */
  workers(): number[];
}

function startLsp(name: string): LspProcess {
  const outDir = fs.mkdtempSync(path.join(dir, `${name}-`));
  const mark = marks.next();
  const child = spawnCli(['lsp', '--stdio', '--output-dir', outDir], { env: { ...process.env, [mark]: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // The protocol connection reads stdout; collect() only needs the exit.
  const done = collect(child);
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onError(() => {});
  connection.onClose(() => {});
  connection.listen();
  connections.push(connection);
  return { child, done, mark, outDir, connection, stderr: () => stderr, workers: () => processesMarked(mark).filter((p) => p !== child.pid) };
}

/** Initializes the session and starts a long build; resolves once its worker reports progress. */
async function runningBuild(s: LspProcess): Promise<number[]> {
  await s.connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
  await s.connection.sendNotification(InitializedNotification.type, {});
  const token = `sig-${crypto.randomBytes(3).toString('hex')}`;
  let reports = 0;
  s.connection.onProgress(WorkDoneProgress.type, token, (v) => (v.kind === 'report' ? reports++ : undefined));
  // Never answered once the server goes: the request only starts the build.
  void s.connection
    .sendRequest(ExecuteCommandRequest.type, {
      command: 'trtBuildStudio.build',
      arguments: [{ modelPath: model, outputPath: path.join(s.outDir, 'm.engine'), options: { backend: 'simulated', simDuration: 30, simSeed: 5 } }],
      workDoneToken: token,
    })
    .catch(() => undefined);
  await until(`the build to run (stderr: ${s.stderr()})`, () => reports > 0 && s.workers().length > 0);
  return s.workers();
}

describe('lsp: the first signal stops gracefully', () => {
  it('cancels the running build, waits for its worker, exits 0; no engine, no worker', async () => {
    const s = startLsp('graceful');
    const workers = await runningBuild(s);
    s.child.kill('SIGTERM');
    const r = await s.done;
    expect({ code: r.code, signal: r.signal }, s.stderr()).toEqual({ code: 0, signal: null });
    expect(s.stderr()).toMatch(/SIGTERM: cancelling running builds/);
    expect(s.stderr()).not.toMatch(/again: killed/);
    expect(workers.filter(isAlive)).toEqual([]);
    expect(await leftoverMarked(s.mark)).toEqual([]);
    expect(fs.readdirSync(s.outDir)).toEqual([]);
  }, 60_000);
});

describe('lsp: a second signal forces the shutdown', () => {
  it('while the shutdown waits on a worker that cannot answer: kills it by PID, exits 0 in seconds, nothing left', async () => {
    const s = startLsp('force');
    const workers = await runningBuild(s);
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
    const s = startLsp('eof-force');
    const workers = await runningBuild(s);
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

describe('lsp: storms of signals', () => {
  it('during a running build: exits 0, never by a signal, no worker, no engine', async () => {
    for (let i = 0; i < 2; i++) {
      const s = startLsp(`storm-${i}`);
      await runningBuild(s);
      const sent = signalStorm(s.child, i ? ['SIGINT'] : ['SIGTERM', 'SIGINT']);
      const r = await s.done;
      expect({ code: r.code, signal: r.signal }, s.stderr()).toEqual({ code: 0, signal: null });
      expect(sent()).toBeGreaterThan(0);
      expect(await leftoverMarked(s.mark)).toEqual([]);
      expect(fs.readdirSync(s.outDir)).toEqual([]);
    }
  }, 90_000);

  it('from the spawn: exits 0, or by the signal only before any of its code ran', async () => {
    let handled = 0;
    // 'answered': the last storm starts once the server answered initialize, so at least one
    // meets it running however long Node's start takes on a busy machine (it passed 400 ms there).
    for (const delayMs of [0, 40, 80, 150, 250, 400, 'answered'] as const) {
      const s = startLsp(`spawn-${delayMs}`);
      await new Promise((r) => s.child.once('spawn', r));
      if (delayMs === 'answered') await s.connection.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
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
