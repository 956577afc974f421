// `trt-build-studio mcp`: the MCP server over stdio. The CLI dispatches here through
// require('../mcp/server.js').runMcp(argv); `node dist/apps/mcp/server.js` runs it directly.
// Builds run in the service's isolated worker processes, so a crashing build never takes the
// server down. Stopping it (docs/mcp.md, "Stopping the server"):
// - closing stdin, or a first SIGINT/SIGTERM: cancel running builds, wait for their workers to
//   exit, exit 0;
// - a signal while that shutdown is under way: force it, kill every build worker by PID
//   (the service still sees each exit and removes its partial output), exit 0 once they are gone;
// - a signal after that, or once the exit code is known: exit at once (workers killed first).
// The signal handlers are in place before the SDK, zod and the service load (the slow part of the
// start), so a signal during start-up stops the server the same way instead of killing it.
import type { BuildServiceApi } from '../service/api.js';
import { displayLines, displayMessage } from '../shared/display-text.js';
import { LiveWorkers } from '../service/live-workers.js';
import { processSignals } from '../process/process-signals.js';
import { listenForStop, stdioServerStop } from '../surface/stdio-server-stop.js';
import { CancelReasons } from '../surface/cancel-reasons.js';
import { NO_PLUGINS } from '../service/plugin-libraries.js';
import { parseStdioServerArgs, readStdioServerArgs, type StdioServerFlags, type StdioServerOptions } from '../surface/stdio-server-args.js';

const USAGE = `Usage: trt-build-studio mcp [--output-dir <dir>] [--plugin-dir <folder>]... [--heartbeat <seconds>] [--queue <redis://host:port>]

Runs an MCP (Model Context Protocol) server on stdin/stdout for agent runtimes. Register it with
your MCP client, e.g. {"mcpServers": {"trt-build-studio": {"command": "npx", "args": ["trt-build-studio", "mcp"]}}}

  --plugin-dir <folder>  plugin libraries (staticPlugins, dynamicPlugins, pluginsToSerialize) are
                         loaded only from inside these folders (repeatable; symlinks and .. are
                         resolved); without it every plugin library is refused
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

// Log lines quote paths and names from requests: escaped and cut (display-text.ts), line by line.
const log = (line: string) => process.stderr.write(`[mcp] ${displayMessage(line)}\n`);

/** Runs until the client goes away or a signal arrives; resolves to the exit code. */
export async function runMcp(argv: string[]): Promise<number> {
  const signals = processSignals();
  const early = listenForStop(signals);

  const opts = readStdioServerArgs(argv, FLAGS, USAGE);
  if (typeof opts === 'number') return opts;

  const [{ StdioServerTransport }, { createBuildService }, { claimStdoutForProtocol, frameJsonRpc }, { createMcpServer, SERVER_NAME }, { packageVersion }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../service/build-service.js'),
    import('../surface/stdio-channel.js'),
    import('./tools.js'),
    import('../service/package-info.js'),
  ]);
  const { startSurfaceStudio } = await import('../service/watched/studio-probe.js');

  const channel = claimStdoutForProtocol();
  const workers = new LiveWorkers();
  signals.onHardExit(() => workers.killAll());
  const service: BuildServiceApi = opts.queue
    ? await (await import('../farm/serve-queue.js')).createServeService({ queue: opts.queue, quiet: true, who: 'trt-build-studio mcp' })
    : // A client names the plugin libraries: only the operator's --plugin-dir folders load.
      createBuildService({ outputDir: opts.outputDir, launcher: workers.launcher, pluginPolicy: opts.pluginPolicy ?? NO_PLUGINS });
  // One record of stop requests for the server: its tools' and its own stop's.
  const reasons = new CancelReasons();
  const server = createMcpServer(service, {
    version: packageVersion(),
    reasons,
    // On a farm the workers decide (worker --plugin-dir); here this server's own service does.
    ...(opts.queue ? {} : { pluginPolicy: opts.pluginPolicy ?? NO_PLUGINS }),
    // Silence is called out by the time a heartbeat is due, or it would never show at short cadences.
    notifier: opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs, silentAfterMs: Math.min(2000, Math.round(opts.heartbeatMs * 0.8)) } : undefined,
    log,
  });
  // A studio too (docs/watch.md): builds that `watch` or a drop-in monitor reports show in
  // list_builds / get_build, labelled watched, and cancel_build reaches the program's probe.
  const studio = await startSurfaceStudio(service, 'mcp', log);
  const framed = frameJsonRpc(process.stdin, {
    reply: (message) => channel.stdout.write(`${JSON.stringify(message)}\n`),
    log,
  });
  const transport = new StdioServerTransport(framed, channel.stdout);

  const stopping = stdioServerStop({
    service,
    workers,
    signals,
    log,
    reasons,
    shutdown: () => service.shutdown(),
    release: async () => {
      await studio?.close().catch(() => {});
      await server.close().catch(() => {});
      process.stdin.pause();
      channel.release();
    },
  });
  const { close, done } = stopping;
  early.attach(stopping.stop);

  const onStdinEnd = () => void close('stdin closed');
  // A bug in one tool call must not take the other builds down with it.
  const onRejection = (reason: unknown) => log(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  process.stdin.once('end', onStdinEnd);
  process.on('unhandledRejection', onRejection);
  transport.onerror = (e) => log(`transport error: ${e.message}`);
  server.server.onclose = () => void close('connection closed');

  if (early.pending) {
    // Stopped while starting: nothing can be running yet.
    void close(early.pending);
  } else {
    await server.connect(transport);
    log(`${SERVER_NAME} MCP server ready on stdio (pid ${process.pid})`);
  }
  const code = await done;
  process.stdin.off('end', onStdinEnd);
  process.off('unhandledRejection', onRejection);
  return code;
}

if (require.main === module) {
  runMcp(process.argv.slice(2)).then(
    (code) => processSignals().exitWith(code),
    (e: unknown) => {
      process.stderr.write(`trt-build-studio mcp: ${displayLines((e as Error).stack ?? String(e))}\n`);
      process.exit(1);
    },
  );
}
