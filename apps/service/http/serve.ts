// `trt-build-studio serve`: the build service behind HTTP + SSE, for scripts, CI and the web UI.
// Runs until SIGINT/SIGTERM, then cancels builds (no worker outlives the server), closes the
// server and removes uploaded models.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BuildServiceApi } from '../api.js';
import { createServeService } from '../../farm/serve-queue.js';
import { generateToken } from './auth.js';
import { createHttpServer, removeUploadDir } from './server.js';
import { isLoopback, parseServeArgs, SERVE_USAGE, uiUrl, UsageError, type ServeArgs } from './serve-args.js';

export async function runServe(argv: string[]): Promise<number> {
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
  // A farm's workers read uploaded models from the shared artifact folder.
  const uploadDir = await fs.promises.mkdtemp(path.join(args.queue && args.artifacts ? args.artifacts : os.tmpdir(), 'tbs-uploads-'));
  let service: BuildServiceApi;
  try {
    service = await createServeService(args);
  } catch (e) {
    process.stderr.write(`trt-build-studio serve: ${(e as Error).message}\n`);
    await removeUploadDir(uploadDir);
    return 2;
  }
  const http = createHttpServer({
    service,
    token,
    uploadDir,
    staticDir: path.join(packageRoot(), 'dist', 'renderer'),
    heartbeatMs: args.heartbeatMs,
    onInternalError: (err, req) => process.stderr.write(`internal error in ${req.method} ${req.url}: ${(err as Error)?.stack ?? String(err)}\n`),
  });

  let port: number;
  try {
    port = await http.listen(args.port, args.host);
  } catch (e) {
    process.stderr.write(`trt-build-studio serve: cannot listen on ${args.host}:${args.port}: ${(e as Error).message}\n`);
    await service.shutdown();
    await removeUploadDir(uploadDir);
    return 1;
  }
  process.stdout.write(`${uiUrl(args.host, port, token)}\n`);
  process.stderr.write(
    `trt-build-studio serve: listening on ${args.host}:${port}; uploads kept in ${uploadDir} until shutdown (Ctrl-C stops and cancels running builds)\n`,
  );

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  process.stderr.write(`trt-build-studio serve: ${signal}, cancelling builds and shutting down…\n`);
  // A second signal escalates: the service's second cancel kills the workers outright.
  const escalate = () => {
    process.stderr.write('trt-build-studio serve: stopping workers now\n');
    for (const b of service.listBuilds()) service.cancelBuild(b.id, 'shutdown');
  };
  process.on('SIGINT', escalate);
  process.on('SIGTERM', escalate);
  try {
    // Streams stay open until the service has shut down, so subscribers still receive each
    // cancelled build's build.finished.
    void http.stopAccepting();
    await service.shutdown();
    await http.close();
  } finally {
    await removeUploadDir(uploadDir);
    process.off('SIGINT', escalate);
    process.off('SIGTERM', escalate);
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
