// `trt-build-studio lsp`: the language server on stdin/stdout. The CLI dispatches here through
// require('../lsp/command.js').runLsp(argv); `node dist/apps/lsp/main.js` runs it directly.
// Builds run in the service's worker processes; the LSP shutdown request, a closed stdin and
// SIGTERM/SIGINT all cancel running builds and wait for their workers before the process ends.
// A second signal while that wait goes on kills the workers by PID and exits (the process's
// signal handlers are shared with the other commands: see process/process-signals.ts).
import { Writable } from 'node:stream';
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node';
import { createBuildService } from '../service/build-service.js';
import type { BuildServiceApi } from '../service/api.js';
import { claimStdoutForProtocol } from '../surface/stdio-channel.js';
import { createLspServer, SERVER_NAME } from './server.js';
import { DEFAULT_MAX_MESSAGE_BYTES, FrameGuard } from './frame-guard.js';
import { gateLifecycle } from './lifecycle-gate.js';
import { parseStdioServerArgs, readStdioServerArgs, type StdioServerFlags, type StdioServerOptions } from '../surface/stdio-server-args.js';
import { packageVersion } from '../service/package-info.js';
import { LiveWorkers } from '../service/live-workers.js';
import { processSignals } from '../process/process-signals.js';
import { listenForStop, stdioServerStop } from '../surface/stdio-server-stop.js';
import { CancelReasons } from '../surface/cancel-reasons.js';
import { NO_PLUGINS } from '../service/plugin-libraries.js';
import { displayMessage } from '../shared/display-text.js';
import { startSurfaceStudio } from '../service/watched/studio-probe.js';

const USAGE = `Usage: trt-build-studio lsp [--stdio] [--output-dir <dir>] [--plugin-dir <folder>]... [--queue <redis://...>] [--heartbeat <seconds>]

Runs a Language Server Protocol server on stdin/stdout for editors (VS Code, Neovim, Emacs, Helix...).
Commands (workspace/executeCommand): trtBuildStudio.build, trtBuildStudio.cancel, trtBuildStudio.listBuilds,
trtBuildStudio.inspect, trtBuildStudio.backends, trtBuildStudio.checkEngine,
trtBuildStudio.explainEngine. Builds report work-done progress ($/progress) and
stop on window/workDoneProgress/cancel or $/cancelRequest.

  --stdio                accepted for clients that pass it (stdio is the only transport)
  --plugin-dir <folder>  plugin libraries (staticPlugins, dynamicPlugins, pluginsToSerialize) are
                         loaded only from inside these folders (repeatable; symlinks and .. are
                         resolved); without it every plugin library is refused
  --output-dir <dir>     where engines go when a build names no outputPath
  --queue <redis://...>  build farm: builds run on \`trt-build-studio worker\` machines; the build
                         command then takes target, retries, and targets (one build per target)
  --heartbeat <seconds>  progress report during silent stretches (default 2.5)
  --max-message-mib <n>  largest message accepted, in MiB (default 8); a larger one is logged
                         and skipped, like a frame with a bad header
  --help                 this text

Logs go to stderr; stdout carries only the protocol. A frame with a bad header (no
Content-Length, or one that is not a byte count) is logged and skipped up to the next
Content-Length header. Requests before "initialize" are answered -32002 (ServerNotInitialized),
requests after "shutdown" -32600 (InvalidRequest); the "exit" notification ends the process.`;

export type LspCliOptions = StdioServerOptions;

const FLAGS: StdioServerFlags = { command: 'lsp', minHeartbeatS: 0.2, stdioFlag: true, maxMessage: true, queue: true };

export function parseLspArgs(argv: readonly string[]): LspCliOptions | 'help' {
  return parseStdioServerArgs(argv, FLAGS);
}

const log = (line: string) => process.stderr.write(`[lsp] ${displayMessage(line)}\n`);

/** Runs until the client goes away; resolves to the exit code (the LSP `exit` notification ends the process itself). */
export async function runLsp(argv: string[]): Promise<number> {
  // Listening before anything else: a signal during start-up is kept and acted on once ready.
  const signals = processSignals();
  const early = listenForStop(signals);

  const opts = readStdioServerArgs(argv, FLAGS, USAGE);
  if (typeof opts === 'number') return opts;

  // Stray console output from any module would corrupt the JSON-RPC stream: stdout is the protocol's alone.
  const channel = claimStdoutForProtocol();
  const workers = new LiveWorkers();
  signals.onHardExit(() => workers.killAll());
  // On a farm, builds belong to the farm: the server's shutdown stops following them, as serve's does.
  const service: BuildServiceApi = opts.queue
    ? await (await import('../farm/serve-queue.js')).createServeService({ queue: opts.queue, quiet: true, who: 'trt-build-studio lsp' })
    : // A client names the plugin libraries: only the operator's --plugin-dir folders load.
      createBuildService({ outputDir: opts.outputDir, launcher: workers.launcher, pluginPolicy: opts.pluginPolicy ?? NO_PLUGINS });
  // Explicit streams: the library's own stdio mode calls process.exit the moment stdin ends,
  // before running builds could be cancelled and their workers reaped.
  // The channel's stdout is a bare write(); the JSON-RPC writer also listens for errors and close,
  // so it gets a real stream whose writes complete when the terminal's stdout has taken them.
  const protocolOut = new Writable({ write: (chunk, encoding, cb) => void channel.stdout.write(chunk, encoding, cb) });
  // Framing is checked before the library reads it (it cannot resynchronise after a bad header and
  // has no size limit), and the lifecycle rules before it dispatches (it does not enforce them).
  const frames = process.stdin.pipe(new FrameGuard({ maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, log }));
  const writer = new StreamMessageWriter(protocolOut);
  const connection = createConnection(ProposedFeatures.all, gateLifecycle(new StreamMessageReader(frames), writer, log), writer);
  // One record of stop requests for the server: its commands' and its own stop's.
  const reasons = new CancelReasons();
  const server = createLspServer(connection, service, {
    version: packageVersion(),
    reasons,
    pacing: opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs, silentAfterMs: Math.min(2000, Math.round(opts.heartbeatMs * 0.8)) } : undefined,
    log,
  });

  // A studio too (docs/watch.md): builds that `watch` or a drop-in monitor reports show in
  // trtBuildStudio.listBuilds, labelled watched, and trtBuildStudio.cancel reaches the probe.
  const studio = await startSurfaceStudio(service, 'lsp', log);

  const stopping = stdioServerStop({
    service,
    workers,
    signals,
    log,
    reasons,
    shutdown: () => server.shutdown(),
    release: async () => {
      await studio?.close().catch(() => {});
      connection.dispose();
      process.stdin.unpipe(frames);
      process.stdin.pause();
      channel.release();
    },
  });
  const { close, done } = stopping;
  early.attach(stopping.stop);
  // The `exit` notification: the library ends the process right after this handler, so the
  // workers are told to stop now (after a `shutdown` request they already have).
  connection.onExit(() => void server.shutdown());
  const onStdinEnd = () => void close('stdin closed');
  const onRejection = (reason: unknown) => log(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  process.stdin.once('end', onStdinEnd);
  process.on('unhandledRejection', onRejection);

  if (early.pending) {
    // Stopped while starting: nothing can be running yet.
    void close(early.pending);
  } else {
    connection.listen();
    log(`${SERVER_NAME} language server ready on stdio (pid ${process.pid})`);
  }
  const code = await done;
  process.stdin.off('end', onStdinEnd);
  process.off('unhandledRejection', onRejection);
  return code;
}
