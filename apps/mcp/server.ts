// `trt-build-studio mcp`: the MCP server over stdio. The CLI dispatches here through
// require('../mcp/server.js').runMcp(argv); `node dist/apps/mcp/server.js` runs it directly.
// Builds run in the service's isolated worker processes, so a crashing build never takes the
// server down; closing stdin or SIGTERM/SIGINT cancels running builds and waits for their workers.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createBuildService } from '../service/build-service.js';
import { claimStdoutForProtocol, frameJsonRpc } from './stdio-channel.js';
import { createMcpServer, SERVER_NAME } from './tools.js';
import { packageVersion } from '../service/package-info.js';
import { parseStdioServerArgs, readStdioServerArgs, type StdioServerFlags, type StdioServerOptions } from '../service/stdio-server-args.js';

const USAGE = `Usage: trt-build-studio mcp [--output-dir <dir>] [--heartbeat <seconds>] [--queue <redis://host:port>]

Runs an MCP (Model Context Protocol) server on stdin/stdout for agent runtimes. Register it with
your MCP client, e.g. {"mcpServers": {"trt-build-studio": {"command": "npx", "args": ["trt-build-studio", "mcp"]}}}

  --output-dir <dir>     where engines go when build_engine names no outputPath
  --queue <redis://...>  build farm: builds run on \`trt-build-studio worker\` machines (target, retries)
  --heartbeat <seconds>  progress heartbeat during silent stretches (default 2.5)
  --help                 this text

Logs go to stderr; stdout carries only the protocol.`;

export type McpCliOptions = StdioServerOptions;

const FLAGS: StdioServerFlags = { command: 'mcp', minHeartbeatS: 0.5, queue: true };

export function parseMcpArgs(argv: readonly string[]): McpCliOptions | 'help' {
  return parseStdioServerArgs(argv, FLAGS);
}

const log = (line: string) => process.stderr.write(`[mcp] ${line}\n`);

/** Runs until the client goes away or a signal arrives; resolves to the exit code. */
export async function runMcp(argv: string[]): Promise<number> {
  const opts = readStdioServerArgs(argv, FLAGS, USAGE);
  if (typeof opts === 'number') return opts;

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
