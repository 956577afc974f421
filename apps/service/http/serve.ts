// `trt-build-studio serve`: the build service behind HTTP + SSE, for scripts, CI and the web UI.
// Runs until SIGINT/SIGTERM, then cancels builds (no worker outlives the server), closes the
// server and removes uploaded models. Later signals never kill it by signal: during shutdown they
// escalate (workers are killed at once), after it the process exits 0 right away.
//
// Which build service answers (builds run here, or on a build farm with --queue) is the caller's
// choice, injected as a factory: the HTTP layer knows only BuildServiceApi, so it does not depend
// on the farm (the CLI's serve command, apps/cli/commands/serve.ts, wires the farm in).
import { displayMessage } from '../../shared/display-text.js';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BuildServiceApi } from '../api.js';
import { ensurePrivateDir } from '../private-dir.js';
import { processSignals } from '../../process/process-signals.js';
import { generateToken } from './auth.js';
import { createHttpServer } from './server.js';
import { createUploadDir, pruneUploads, removeStaleUploadDirs, removeUploadDir } from './upload-dirs.js';
import { UsageError } from '../../shared/usage-error.js';
import { isLoopback, parseServeArgs, SERVE_USAGE, uiUrl, type ServeArgs } from './serve-args.js';
import { favourEventPath } from '../../process/event-path-priority.js';
import { startStudioProbe, takesWatchedBuilds, type StudioProbe } from '../watched/studio-probe.js';

/** What serve asks of its build service factory: its own options, from the command line. */
export interface ServeServiceRequest {
  /** --queue: a build farm's Redis URL; a factory without a farm must refuse it with a clear message. */
  queue?: string;
  artifacts?: string;
  outputDir?: string;
  concurrency?: number;
  /** Finished builds whose details are kept (the rest keep their summary). */
  retainFinishedBuilds?: number;
  /** Warnings that are not about one build. */
  onWarning?: (message: string) => void;
  /** Build farm: events kept per build (Redis and serve's replay), builds kept in the history. */
  farmLimits?: { eventsPerBuild?: number; history?: number };
}

/** Makes the build service; a thrown error is reported as `serve: <message>` with exit code 2. */
export type ServeServiceFactory = (req: ServeServiceRequest) => Promise<BuildServiceApi>;

export async function runServe(argv: string[], createService: ServeServiceFactory): Promise<number> {
  let args: ServeArgs;
  try {
    args = parseServeArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`trt-build-studio serve: ${e.message}\n${SERVE_USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${SERVE_USAGE}\n`);
    return 0;
  }
  if (!isLoopback(args.host)) {
    process.stderr.write(
      `\n  WARNING: binding to ${args.host} makes the build service reachable from other machines.\n` +
        '  Anyone who learns the token can run builds and read files this user can read.\n\n',
    );
  }

  const token = args.token ?? generateToken();
  // A farm's workers read uploaded models from the shared artifact folder, where they stay across
  // serve restarts (a queued build must still find its model) until the retention removes them.
  // A local serve keeps uploads in a folder of its own that goes with it.
  const farmUploads = args.queue && args.artifacts ? path.join(args.artifacts, 'uploads') : undefined;
  const RETENTION_MS = (args.uploadRetentionDays ?? 7) * 24 * 3600 * 1000;
  const removeOwnUploads = (dir: string) => (farmUploads ? Promise.resolve() : removeUploadDir(dir));
  let pruneTimer: NodeJS.Timeout | undefined;
  let uploadDir: string;
  if (farmUploads) {
    try {
      ensurePrivateDir(path.dirname(farmUploads), 'artifact');
      ensurePrivateDir(farmUploads, 'upload');
    } catch (e) {
      process.stderr.write(`trt-build-studio serve: --artifacts ${args.artifacts}: ${(e as Error).message}\n`);
      return 2;
    }
    uploadDir = farmUploads;
    const prune = async () => {
      const gone = await pruneUploads(farmUploads, RETENTION_MS);
      if (gone.length) process.stderr.write(`trt-build-studio serve: removed ${gone.length} upload(s) older than ${args.uploadRetentionDays ?? 7} day(s)\n`);
    };
    await prune();
    pruneTimer = setInterval(() => void prune(), Math.min(RETENTION_MS || 3_600_000, 3_600_000));
    pruneTimer.unref();
  } else {
    const uploadBase = os.tmpdir();
    for (const stale of await removeStaleUploadDirs(uploadBase)) {
      process.stderr.write(`trt-build-studio serve: removed the upload folder of a server that is gone: ${stale}\n`);
    }
    uploadDir = await createUploadDir(uploadBase);
  }
  let service: BuildServiceApi;
  try {
    service = await createService({
      queue: args.queue,
      artifacts: args.artifacts,
      outputDir: args.outputDir,
      concurrency: args.concurrency,
      retainFinishedBuilds: args.keepBuildDetails,
      farmLimits: args.farmEventsPerBuild !== undefined || args.farmHistory !== undefined ? { eventsPerBuild: args.farmEventsPerBuild, history: args.farmHistory } : undefined,
      onWarning: (message) => process.stderr.write(`trt-build-studio serve: ${displayMessage(message)}\n`),
    });
  } catch (e) {
    process.stderr.write(`trt-build-studio serve: ${(e as Error).message}\n`);
    await removeOwnUploads(uploadDir);
    return 2;
  }
  // Installed before anything listens, so no signal ever meets the default action. Later
  // signals escalate: the service's second cancel kills a build's worker outright.
  const signals = processSignals();
  const stopRequested = new Promise<NodeJS.Signals>((resolve) =>
    signals.listen((sig, n) => {
      if (n === 1) return resolve(sig);
      process.stderr.write('trt-build-studio serve: stopping workers now\n');
      for (const b of service.listBuilds()) service.cancelBuild(b.id, 'shutdown');
    }),
  );
  // The service's thread writes every event to its subscribers: ahead of the builds it starts
  // (which go back to the build's priority natively) where the OS allows.
  favourEventPath();
  const http = createHttpServer({
    service,
    token,
    uploadDir,
    staticDir: path.join(packageRoot(), 'dist', 'renderer'),
    heartbeatMs: args.heartbeatMs,
    onInternalError: (err, req) =>
      process.stderr.write(
        `internal error in ${req.method} ${displayMessage(req.url ?? '')}: ${String((err as Error)?.stack ?? err)
          .split('\n')
          .map(displayMessage)
          .join('\n')}\n`,
      ),
  });

  let port: number;
  try {
    port = await http.listen(args.port, args.host);
  } catch (e) {
    process.stderr.write(`trt-build-studio serve: cannot listen on ${args.host}:${args.port}: ${(e as Error).message}\n`);
    await service.shutdown();
    await removeOwnUploads(uploadDir);
    return 1;
  }
  process.stdout.write(`${uiUrl(args.host, port, token)}\n`);
  // Watched builds (docs/watch.md): `watch` and the drop-in monitors find this studio in the
  // registry folder and send it their builds. A farm's service runs builds elsewhere: not a sink.
  // TBS_NO_STUDIO=1 keeps a serve out of the registry (tests running beside a user's studio).
  let studio: StudioProbe | undefined;
  if (takesWatchedBuilds(service) && process.env.TBS_NO_STUDIO !== '1') {
    const base = new URL(uiUrl(args.host, port, token));
    try {
      studio = await startStudioProbe(service, {
        url: base.origin,
        token,
        kind: 'serve',
        onWarning: (message) => process.stderr.write(`trt-build-studio serve: ${displayMessage(message)}\n`),
      });
      process.stderr.write(`trt-build-studio serve: watched builds: probe socket ${studio.probeSocket} (published in ${studio.registryFile})\n`);
    } catch (e) {
      process.stderr.write(`trt-build-studio serve: not taking watched builds: ${(e as Error).message}\n`);
    }
  }
  process.stderr.write(
    `trt-build-studio serve: listening on ${args.host}:${port}; uploads kept in ${uploadDir} ${farmUploads ? (args.uploadRetentionDays === 0 ? 'for good' : `for ${args.uploadRetentionDays ?? 7} day(s)`) : 'until shutdown'} (Ctrl-C stops and cancels running builds)\n`,
  );

  const first = await stopRequested;
  process.stderr.write(`trt-build-studio serve: ${first}, cancelling builds and shutting down…\n`);
  try {
    // Streams stay open until the service has shut down, so subscribers still receive each
    // cancelled build's build.finished.
    void http.stopAccepting();
    await studio?.close();
    await service.shutdown();
    await http.close();
  } finally {
    if (pruneTimer) clearInterval(pruneTimer);
    await removeOwnUploads(uploadDir);
    // From here a signal exits 0 at once; the process ends explicitly (see process-signals.ts).
    signals.exitWith(0);
  }
  return 0;
}

/** The folder holding package.json, from sources (apps/service/http) or dist (dist/apps/service/http). */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && !dir.endsWith(`${path.sep}dist`)) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}
