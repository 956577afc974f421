// `trt-build-studio mcp`: the MCP server over stdio. The CLI dispatches here through
// require('../mcp/server.js').runMcp(argv); `node dist/apps/mcp/server.js` runs it directly.
// Builds run in the service's isolated worker processes, so a crashing build never takes the
// server down; closing stdin or SIGTERM/SIGINT cancels running builds and waits for their workers.
import * as path from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createBuildService } from '../service/build-service.js';
import { claimStdoutForProtocol, frameJsonRpc } from './stdio-channel.js';
import { createMcpServer, SERVER_NAME } from './tools.js';
import { packageVersion } from '../service/package-info.js';

const USAGE = `Usage: trt-build-studio mcp [--output-dir <dir>] [--heartbeat <seconds>] [--queue <redis://host:port>]

Runs an MCP (Model Context Protocol) server on stdin/stdout for agent runtimes. Register it with
your MCP client, e.g. {"mcpServers": {"trt-build-studio": {"command": "npx", "args": ["trt-build-studio", "mcp"]}}}

  --output-dir <dir>     where engines go when build_engine names no outputPath
  --queue <redis://...>  build farm: builds run on \`trt-build-studio worker\` machines (target, retries)
  --heartbeat <seconds>  progress heartbeat during silent stretches (default 2.5)
  --help                 this text

Logs go to stderr; stdout carries only the protocol.`;

export interface McpCliOptions {
  outputDir?: string;
  /** Build farm: the Redis URL builds are queued in. */
  queue?: string;
  heartbeatMs?: number;
}

export class UsageError extends Error {}

export function parseMcpArgs(argv: readonly string[]): McpCliOptions | 'help' {
  const opts: McpCliOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--output-dir':
        opts.outputDir = path.resolve(value());
        break;
      case '--queue':
        opts.queue = value();
        break;
      case '--heartbeat': {
        const v = value();
        const s = Number(v);
        if (!Number.isFinite(s) || s < 0.5 || s > 60) throw new UsageError(`--heartbeat must be between 0.5 and 60 seconds, got "${v}"`);
        opts.heartbeatMs = Math.round(s * 1000);
        break;
      }
      default:
        throw new UsageError(`unknown argument "${arg}" (see trt-build-studio mcp --help)`);
    }
  }
  return opts;
}

const log = (line: string) => process.stderr.write(`[mcp] ${line}\n`);

/** Runs until the client goes away or a signal arrives; resolves to the exit code. */
export async function runMcp(argv: string[]): Promise<number> {
  let opts: McpCliOptions;
  try {
    const parsed = parseMcpArgs(argv);
    if (parsed === 'help') {
      // No protocol session has started, so stdout is still the terminal's.
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    opts = parsed;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`trt-build-studio mcp: ${e.message}\n`);
    return 2;
  }

  const channel = claimStdoutForProtocol();
  const service = opts.queue
    ? await (await import('../farm/serve-queue.js')).createServeService({ queue: opts.queue, quiet: true })
    : createBuildService({ outputDir: opts.outputDir });
  const server = createMcpServer(service, {
    version: packageVersion(),
    // Silence is called out by the time a heartbeat is due, or it would never show at short cadences.
    notifier: opts.heartbeatMs
      ? { heartbeatMs: opts.heartbeatMs, silentAfterMs: Math.min(2000, Math.round(opts.heartbeatMs * 0.8)) }
      : undefined,
    log,
  });
  const framed = frameJsonRpc(process.stdin, {
    reply: (message) => channel.stdout.write(`${JSON.stringify(message)}\n`),
    log,
  });
  const transport = new StdioServerTransport(framed, channel.stdout);

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let closing = false;
  const close = async (why: string, code = 0) => {
    if (closing) return;
    closing = true;
    log(`${why}: cancelling running builds and stopping their workers`);
    // The service kills workers that ignore a cancel after ~10 s; this is the last resort.
    const watchdog = setTimeout(() => {
      log('workers did not stop in time; exiting anyway');
      resolveDone(1);
    }, 20_000);
    watchdog.unref();
    try {
      await service.shutdown();
    } catch (e) {
      log(`shutdown error: ${(e as Error).message}`);
      code = 1;
    }
    clearTimeout(watchdog);
    await server.close().catch(() => {});
    process.stdin.pause();
    channel.release();
    resolveDone(code);
  };

  const onSigterm = () => void close('SIGTERM');
  const onSigint = () => void close('SIGINT');
  const onStdinEnd = () => void close('stdin closed');
  // A bug in one tool call must not take the other builds down with it.
  const onRejection = (reason: unknown) => log(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  process.once('SIGTERM', onSigterm);
  process.once('SIGINT', onSigint);
  process.stdin.once('end', onStdinEnd);
  process.on('unhandledRejection', onRejection);
  transport.onerror = (e) => log(`transport error: ${e.message}`);
  server.server.onclose = () => void close('connection closed');

  await server.connect(transport);
  log(`${SERVER_NAME} MCP server ready on stdio (pid ${process.pid})`);
  const code = await done;
  process.off('SIGTERM', onSigterm);
  process.off('SIGINT', onSigint);
  process.stdin.off('end', onStdinEnd);
  process.off('unhandledRejection', onRejection);
  return code;
}

if (require.main === module) {
  runMcp(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`trt-build-studio mcp: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
