// Test support for the Python probe (python/, docs/watch.md): a small probe sink (a Unix socket
// server that records every NDJSON line per connection and can answer `cancel`), and a runner for
// Python programs under the watch hook with the stand-in `tensorrt` module beside this file (a
// stand-in written from the documented API, NOT NVIDIA's bindings: see tensorrt/__init__.py).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

const ABOVE = path.resolve(__dirname, '../../..');
export const REPO_ROOT = path.basename(ABOVE) === 'dist' ? path.dirname(ABOVE) : ABOVE;
export const PYTHON_PKG = path.join(REPO_ROOT, 'python');
export const WATCH_HOOK = path.join(PYTHON_PKG, 'watch_hook');
export const FAKE_TRT = path.join(REPO_ROOT, 'test', 'support', 'fake-tensorrt');
export const PYTHON = process.env.TBS_PYTHON ?? 'python3';

export interface ProbeLine {
  type: string;
  [k: string]: unknown;
}

export interface SinkConnection {
  lines: ProbeLine[];
  socket: net.Socket;
  closed: Promise<void>;
  cancel(build: number | '*'): void;
}

export interface ProbeSink {
  path: string;
  connections: SinkConnection[];
  /** Called for every line as it arrives (to answer with `cancel` mid-build). */
  onLine?: (line: ProbeLine, conn: SinkConnection) => void;
  close(): Promise<void>;
}

export async function startSink(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ps-'))): Promise<ProbeSink> {
  const sockPath = path.join(dir, 'probe.sock');
  const sink: ProbeSink = {
    path: sockPath,
    connections: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of sink.connections) c.socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((socket) => {
    let buf = '';
    let done: () => void = () => {};
    const conn: SinkConnection = {
      lines: [],
      socket,
      closed: new Promise<void>((r) => (done = r)),
      cancel: (build) => socket.write(JSON.stringify({ type: 'cancel', build }) + '\n'),
    };
    sink.connections.push(conn);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as ProbeLine;
        buf = buf.slice(nl + 1);
        conn.lines.push(line);
        sink.onLine?.(line, conn);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => done());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(sockPath, () => resolve());
  });
  return sink;
}

export interface PyResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` (or, with `file`, that file; with `argv`, that command, `{file}` standing for the program's path) with python3: the watch hook first on PYTHONPATH (as watch sets it), then
 * `extraPath`, then the stand-in tensorrt. `env` adds to (or, with undefined, removes from) the
 * environment. */
export function runPython(
  script: string,
  opts: { env?: Record<string, string | undefined>; extraPath?: string[]; hook?: boolean; cwd?: string; timeoutMs?: number; file?: string; argv?: string[] } = {},
): Promise<PyResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'py-'));
  const file = opts.file ?? path.join(dir, 'prog.py');
  if (opts.file === undefined) fs.writeFileSync(file, script);
  const pathParts = [...(opts.hook === false ? [] : [WATCH_HOOK]), ...(opts.extraPath ?? []), FAKE_TRT];
  const env: Record<string, string | undefined> = { ...process.env, PYTHONPATH: pathParts.join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
  delete env.TBS_WATCH_SOCKET;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolve, reject) => {
    const argv = (opts.argv ?? [PYTHON, '{file}']).map((a) => a.replaceAll('{file}', file));
    const child = spawn(argv[0], argv.slice(1), { cwd: opts.cwd ?? dir, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}

/** A build's lines of one connection (build.begin … build.end), in arrival order. */
export function buildLines(lines: ProbeLine[], build: number): ProbeLine[] {
  return lines.filter((l) => l.build === build);
}

/** The protocol's structural rules for one build's lines; returns the problems found. */
export function checkBuild(lines: ProbeLine[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  let begun = false;
  let ended = false;
  let endT = Infinity;
  const end = lines.find((l) => l.type === 'build.end');
  if (end) endT = end.t as number;
  for (const l of lines) {
    if (l.type === 'build.begin') {
      if (begun) problems.push('two build.begin');
      begun = true;
      continue;
    }
    if (!begun) problems.push(`${l.type} before build.begin`);
    if (ended) problems.push(`${l.type} after build.end`);
    const t = l.t as number;
    if (typeof t !== 'number' || t < 0 || t > endT) problems.push(`${l.type} ${String(l.name)}: t ${t} outside the build (end ${endT})`);
    const name = l.name as string;
    if (l.type === 'phase.start') {
      if (open.has(name)) problems.push(`${name} started while open`);
      if (l.parent !== null && !open.has(l.parent as string)) problems.push(`${name} started under ${String(l.parent)}, which is not open`);
      open.set(name, l.steps as number);
    } else if (l.type === 'phase.step') {
      const steps = open.get(name);
      if (steps === undefined) problems.push(`step of ${name}, which is not open`);
      else if (!((l.step as number) >= 0 && (l.step as number) < steps)) problems.push(`${name}: step ${String(l.step)} of ${steps}`);
    } else if (l.type === 'phase.finish') {
      if (!open.delete(name)) problems.push(`finish of ${name}, which is not open`);
    } else if (l.type === 'build.end') {
      ended = true;
    }
  }
  if (!ended) problems.push('no build.end');
  if (open.size) problems.push(`never finished: ${[...open.keys()].join(', ')}`);
  return problems;
}
