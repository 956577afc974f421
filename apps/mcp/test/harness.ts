// Starts the real MCP server process (dist/apps/mcp/server.js, built by `npm run build:ts`) and
// connects the official SDK client to it over stdio.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const SERVER_JS = path.resolve(process.cwd(), 'dist/apps/mcp/server.js');

export interface RunningServer {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  /** Everything the server wrote to stderr (its logs), for failure messages. */
  stderr(): string;
  /**
   * Progress notifications the SDK client received after the response had retired their token
   * (modelcontextprotocol/typescript-sdk#2580): sent by the server, dropped by the client.
   */
  lateProgress(): Array<{ progressToken: string | number; progress: number; total?: number; message?: string; _meta?: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * `env` adds to the SDK's default environment. TBS_NO_STUDIO=1 unless `env` says otherwise: a test
 * server stays out of the user's studio registry (a `watch` the user runs would relay to it).
 */
export async function startServer(args: string[] = [], command: string[] = [SERVER_JS], env: Record<string, string | undefined> = {}): Promise<RunningServer> {
  if (!fs.existsSync(SERVER_JS)) throw new Error(`${SERVER_JS} is missing: run "npm run build:ts" first`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...command, ...args],
    cwd: process.cwd(),
    env: Object.fromEntries(Object.entries({ ...getDefaultEnvironment(), TBS_NO_STUDIO: '1', ...env }).filter((e): e is [string, string] => e[1] !== undefined)),
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'trt-build-studio-tests', version: '1.0.0' });
  const late: ReturnType<RunningServer['lateProgress']> = [];
  const LATE = 'Received a progress notification for an unknown token: ';
  client.onerror = (e) => {
    if (e.message.startsWith(LATE)) late.push(JSON.parse(e.message.slice(LATE.length)).params);
  };
  await client.connect(transport);
  const pid = transport.pid;
  if (!pid) throw new Error('server process has no pid');
  return { client, transport, pid, stderr: () => err, lateProgress: () => late, close: () => client.close() };
}

/** Direct children of a process (the build workers of a server). */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
