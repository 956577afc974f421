// A language-server client for tests: the real server process (dist/apps/lsp/main.js) over stdio,
// spoken to with vscode-languageserver-protocol's own JSON-RPC connection, the way an editor does.
// It records every $/progress, diagnostics and buildView notification, answers
// window/workDoneProgress/create, and always kills the process (and its workers) on close.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createProtocolConnection,
  ExecuteCommandRequest,
  InitializeRequest,
  InitializedNotification,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type CancellationToken,
  type InitializeResult,
  type ProgressToken,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageserver-protocol/node';
import { REPO_ROOT } from '../../../test/support/cli.js';
import { childPids, isAlive, waitFor } from '../../mcp/test/harness.js';

export { childPids, isAlive, waitFor };

export const SERVER_ENTRY = path.join(REPO_ROOT, 'dist', 'apps', 'lsp', 'main.js');

export type ProgressValue = (WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) & { at: number };

export interface LspTestClient {
  connection: ProtocolConnection;
  child: ChildProcess;
  pid: number;
  init: InitializeResult;
  /** Every $/progress value per token, in arrival order. */
  progress: Map<ProgressToken, ProgressValue[]>;
  /** Tokens the server asked this client to create. */
  created: ProgressToken[];
  diagnostics: PublishDiagnosticsParams[];
  notifications: Array<{ method: string; params: any }>;
  stderr(): string;
  execute<T = any>(command: string, args: unknown[] | undefined, opts?: { workDoneToken?: ProgressToken; token?: CancellationToken }): Promise<T>;
  /** Registers a client-chosen token before a request uses it. */
  watch(token: ProgressToken): void;
  /** Orderly: shutdown request + exit notification; then waits for the process to end. */
  shutdown(): Promise<number | null>;
  /** Last resort for afterAll: kills the server and any worker still alive. */
  kill(): Promise<void>;
}

/**
 * `env` adds to this process's environment. TBS_NO_STUDIO=1 unless `env` says otherwise: a test
 * server stays out of the user's studio registry (a `watch` the user runs would relay to it).
 */
export async function startLsp(args: string[] = [], opts: { workDoneProgress?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<LspTestClient> {
  if (!fs.existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run \`npm run build:ts\` before these tests`);
  const child = spawn(process.execPath, [SERVER_ENTRY, '--stdio', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TBS_NO_STUDIO: '1', ...opts.env },
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const pid = child.pid!;
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const progress = new Map<ProgressToken, ProgressValue[]>();
  const created: ProgressToken[] = [];
  const diagnostics: PublishDiagnosticsParams[] = [];
  const notifications: Array<{ method: string; params: any }> = [];
  const watch = (token: ProgressToken) => {
    if (progress.has(token)) return;
    progress.set(token, []);
    connection.onProgress(WorkDoneProgress.type, token, (v) => progress.get(token)!.push({ ...v, at: Date.now() }));
  };
  connection.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    created.push(token);
    watch(token);
    return null;
  });
  connection.onNotification(PublishDiagnosticsNotification.type, (p) => diagnostics.push(p));
  connection.onNotification((method: string, params: any) => notifications.push({ method, params }));
  connection.onError(() => {});
  connection.listen();

  const kill = async () => {
    const workers = childPids(pid);
    if (isAlive(pid)) child.kill('SIGKILL');
    for (const w of workers) if (isAlive(w)) process.kill(w, 'SIGKILL');
    connection.dispose();
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let init: InitializeResult;
  try {
    init = await Promise.race([
      connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: null,
        capabilities: { window: { workDoneProgress: opts.workDoneProgress ?? true } },
      }),
      exited.then((code) => Promise.reject(new Error(`the server exited with code ${code} before answering initialize`))),
    ]);
    await connection.sendNotification(InitializedNotification.type, {});
  } catch (e) {
    await kill();
    throw new Error(`initialize failed: ${(e as Error).message}\n${err}`, { cause: e });
  }

  return {
    connection,
    child,
    pid,
    init,
    progress,
    created,
    diagnostics,
    notifications,
    stderr: () => err,
    watch,
    execute: (command, args, o = {}) =>
      connection.sendRequest(
        ExecuteCommandRequest.type,
        { command, arguments: args, ...(o.workDoneToken !== undefined ? { workDoneToken: o.workDoneToken } : {}) },
        o.token,
      ) as Promise<any>,
    shutdown: async () => {
      await connection.sendRequest('shutdown');
      await connection.sendNotification('exit');
      const code = await exited;
      connection.dispose();
      return code;
    },
    kill,
  };
}
