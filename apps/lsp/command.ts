// `trt-build-studio lsp`: the language server on stdin/stdout. The CLI dispatches here through
// require('../lsp/command.js').runLsp(argv); `node dist/apps/lsp/main.js` runs it directly.
// Builds run in the service's worker processes; the LSP shutdown request, a closed stdin and
// SIGTERM/SIGINT all cancel running builds and wait for their workers before the process ends.
import { Writable } from 'node:stream';
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node';
import { createBuildService } from '../service/build-service.js';
import { claimStdoutForProtocol } from '../mcp/stdio-channel.js';
import { createLspServer, SERVER_NAME } from './server.js';
import { parseStdioServerArgs, readStdioServerArgs, type StdioServerFlags, type StdioServerOptions } from '../service/stdio-server-args.js';
import { packageVersion } from '../service/package-info.js';

const USAGE = `Usage: trt-build-studio lsp [--stdio] [--output-dir <dir>] [--heartbeat <seconds>]

Runs a Language Server Protocol server on stdin/stdout for editors (VS Code, Neovim, Emacs, Helix...).
Commands (workspace/executeCommand): trtBuildStudio.build, trtBuildStudio.cancel,
trtBuildStudio.inspect, trtBuildStudio.backends. Builds report work-done progress ($/progress) and
stop on window/workDoneProgress/cancel or $/cancelRequest.

  --stdio                accepted for clients that pass it (stdio is the only transport)
  --output-dir <dir>     where engines go when a build names no outputPath
  --heartbeat <seconds>  progress report during silent stretches (default 2.5)
  --help                 this text

Logs go to stderr; stdout carries only the protocol.`;

export type LspCliOptions = StdioServerOptions;

const FLAGS: StdioServerFlags = { command: 'lsp', minHeartbeatS: 0.2, stdioFlag: true };

export function parseLspArgs(argv: readonly string[]): LspCliOptions | 'help' {
  return parseStdioServerArgs(argv, FLAGS);
}

const log = (line: string) => process.stderr.write(`[lsp] ${line}\n`);

/** Runs until the client goes away; resolves to the exit code (the LSP `exit` notification ends the process itself). */
export async function runLsp(argv: string[]): Promise<number> {
  const opts = readStdioServerArgs(argv, FLAGS, USAGE);
  if (typeof opts === 'number') return opts;

  // Stray console output from any module would corrupt the JSON-RPC stream: stdout is the protocol's alone.
  const channel = claimStdoutForProtocol();
  const service = createBuildService({ outputDir: opts.outputDir });
  // Explicit streams: the library's own stdio mode calls process.exit the moment stdin ends,
  // before running builds could be cancelled and their workers reaped.
  // The channel's stdout is a bare write(); the JSON-RPC writer also listens for errors and close,
  // so it gets a real stream whose writes complete when the terminal's stdout has taken them.
  const protocolOut = new Writable({ write: (chunk, encoding, cb) => void channel.stdout.write(chunk, encoding, cb) });
  const connection = createConnection(ProposedFeatures.all, new StreamMessageReader(process.stdin), new StreamMessageWriter(protocolOut));
  const server = createLspServer(connection, service, {
    version: packageVersion(),
    pacing: opts.heartbeatMs ? { heartbeatMs: opts.heartbeatMs, silentAfterMs: Math.min(2000, Math.round(opts.heartbeatMs * 0.8)) } : undefined,
    log,
  });

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let closing = false;
  const close = async (why: string) => {
    if (closing) return;
    closing = true;
    log(`${why}: cancelling running builds and stopping their workers`);
    const watchdog = setTimeout(() => {
      log('workers did not stop in time; exiting anyway');
      resolveDone(1);
    }, 20_000);
    watchdog.unref();
    let code = 0;
    try {
      await server.shutdown();
    } catch (e) {
      log(`shutdown error: ${(e as Error).message}`);
      code = 1;
    }
    clearTimeout(watchdog);
    connection.dispose();
    process.stdin.pause();
    channel.release();
    resolveDone(code);
  };
  // The `exit` notification: the library ends the process right after this handler, so the
  // workers are told to stop now (after a `shutdown` request they already have).
  connection.onExit(() => void server.shutdown());
  const onSigterm = () => void close('SIGTERM');
  const onSigint = () => void close('SIGINT');
  const onStdinEnd = () => void close('stdin closed');
  const onRejection = (reason: unknown) => log(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  process.once('SIGTERM', onSigterm);
  process.once('SIGINT', onSigint);
  process.stdin.once('end', onStdinEnd);
  process.on('unhandledRejection', onRejection);

  connection.listen();
  log(`${SERVER_NAME} language server ready on stdio (pid ${process.pid})`);
  const code = await done;
  process.off('SIGTERM', onSigterm);
  process.off('SIGINT', onSigint);
  process.stdin.off('end', onStdinEnd);
  process.off('unhandledRejection', onRejection);
  return code;
}
