// `trt-build-studio serve`: the HTTP/SSE service (apps/service/http/serve.ts) with its build
// service chosen here, where the surfaces are wired: builds on this machine, or on the build farm
// with --queue. The HTTP layer itself never imports the farm.
//
// `--plugin-dir <folder>` (repeatable) is taken here: a client of the service names plugin
// libraries, and only those inside the operator's folders load (apps/service/plugin-libraries.ts);
// without it every plugin library is refused with a 400.
import * as os from 'node:os';
import * as path from 'node:path';
import { createServeService, type ServeServiceArgs } from '../../farm/serve-queue.js';
import { createBuildService } from '../../service/build-service.js';
import { parsePluginDirs, type ForbiddenFolder, type PluginPolicy } from '../../service/plugin-libraries.js';
import { runServe as runHttpServe } from '../../service/http/serve.js';
import { SERVE_USAGE } from '../../service/http/serve-args.js';
import { UsageError } from '../../shared/usage-error.js';

export const PLUGIN_DIR_USAGE = `  --plugin-dir DIR  plugin libraries (staticPlugins, dynamicPlugins, pluginsToSerialize) load only from
                    inside these folders (repeatable; symlinks and .. resolved; never the upload
                    folder). Without it every plugin library is refused (400)`;

/**
 * serve's command line without its --plugin-dir flags, and their folders. Every other serve
 * option takes a value (`--help`/`-h` aside), so a flag's next word is its value and is never
 * read as --plugin-dir: `--token --plugin-dir` stays the token's.
 */
export function takePluginDirs(argv: readonly string[]): { rest: string[]; dirs: string[] } {
  const rest: string[] = [];
  const dirs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--plugin-dir') {
      const v = argv[++i];
      if (v === undefined || v === '') throw new UsageError('--plugin-dir needs a folder');
      dirs.push(v);
    } else if (a.startsWith('--plugin-dir=')) {
      const v = a.slice('--plugin-dir='.length);
      if (v === '') throw new UsageError('--plugin-dir needs a folder');
      dirs.push(v);
    } else {
      rest.push(a);
      if (a.startsWith('--') && !a.includes('=') && a !== '--help' && i + 1 < argv.length) rest.push(argv[++i]);
    }
  }
  return { rest, dirs };
}

/**
 * Where clients of this serve can write files, which no plugin folder may overlap: a local serve's
 * upload folders (made fresh under the temp folder at each start, apps/service/http/upload-dirs.ts)
 * or a farm's `<artifacts>/uploads`.
 */
export function uploadFolders(rest: readonly string[]): ForbiddenFolder[] {
  const artifactsAt = rest.findIndex((a) => a === '--artifacts' || a.startsWith('--artifacts='));
  if (artifactsAt >= 0) {
    const a = rest[artifactsAt];
    const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : rest[artifactsAt + 1];
    if (value) return [{ dir: path.join(path.resolve(value), 'uploads'), what: "the farm's upload folder" }];
  }
  return [{ dir: os.tmpdir(), what: "serve's upload folders", pattern: /^tbs-uploads-/ }];
}

export async function runServe(argv: string[]): Promise<number> {
  let rest: string[];
  let policy: PluginPolicy;
  try {
    const taken = takePluginDirs(argv);
    rest = taken.rest;
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(`${SERVE_USAGE}\n\n${PLUGIN_DIR_USAGE}\n`);
      return 0;
    }
    if (taken.dirs.length > 0 && rest.some((a) => a === '--queue' || a.startsWith('--queue='))) {
      // On a farm the workers load the libraries, each from its own folders.
      throw new UsageError('--plugin-dir does not apply with --queue: each farm worker loads plugin libraries only from its own folders (trt-build-studio worker --plugin-dir)');
    }
    policy = parsePluginDirs(taken.dirs, { forbidden: uploadFolders(rest) });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`trt-build-studio serve: ${e.message}\n${SERVE_USAGE}\n\n${PLUGIN_DIR_USAGE}\n`);
    return 2;
  }
  if (policy.kind === 'dirs' && policy.dirs.length > 0) process.stderr.write(`trt-build-studio serve: plugin libraries load only from ${policy.dirs.join(', ')}\n`);
  return runHttpServe(rest, (req) => createService(req, policy));
}

/** Local builds get the --plugin-dir policy; a farm's builds are checked by its workers. */
function createService(req: ServeServiceArgs, pluginPolicy: PluginPolicy) {
  if (req.queue) return createServeService(req);
  return Promise.resolve(
    createBuildService({
      outputDir: req.outputDir,
      concurrency: req.concurrency,
      retainFinishedBuilds: req.retainFinishedBuilds,
      onWarning: req.onWarning,
      pluginPolicy,
    }),
  );
}
