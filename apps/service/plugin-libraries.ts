// Plugin libraries are code: the worker dlopens them and runs their constructors. Which ones a
// build may name is the operator's decision, never a client's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildOptions } from '../shared/protocol.js';
import { UsageError } from '../shared/usage-error.js';
import { ServiceError } from './api.js';

/**
 * Who decides which plugin libraries load. `any`: the caller is the operator (the CLI's own
 * `build`, `trtexec`). `dirs`: only regular files strictly inside these folders (a service's
 * `--plugin-dir`s; parsePluginDirs makes them, real paths checked at start-up). An empty `dirs`
 * refuses every plugin library.
 */
export type PluginPolicy = { kind: 'any' } | { kind: 'dirs'; dirs: string[] };

export const PLUGIN_OPTIONS = ['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize'] as const;

/** The policy of a service started without `--plugin-dir`: no plugin library loads. */
export const NO_PLUGINS: PluginPolicy = { kind: 'dirs', dirs: [] };

const bad = (msg: string) => new ServiceError('bad_input', msg);

/** Whether `p` lies strictly inside `dir` (both absolute and normalized). */
export function strictlyInside(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** Whether either folder is, or lies inside, the other. */
function overlaps(a: string, b: string): boolean {
  return a === b || strictlyInside(a, b) || strictlyInside(b, a);
}

function realpathOrResolved(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * A folder that must not hold, or be held by, a plugin folder: somewhere clients can write (the
 * HTTP service's uploads). `pattern`: any folder directly under `dir` whose name matches counts
 * too (serve's local upload folders are made fresh under the temp folder at each start).
 */
export interface ForbiddenFolder {
  dir: string;
  what: string;
  pattern?: RegExp;
}

/**
 * The `--plugin-dir` folders of a service, checked once at start-up: each must exist and be a
 * folder; each is kept as its real path (symlinks and `..` resolved), so a later swap of a link
 * the operator named does not move the trusted place. A folder equal to, inside, or holding a
 * forbidden one (an upload folder) is refused, as is `/` (every file). Throws UsageError (the
 * surfaces print it and exit 2). No folders: the policy that refuses every plugin library.
 */
export function parsePluginDirs(dirs: readonly string[], opts: { forbidden?: readonly ForbiddenFolder[] } = {}): PluginPolicy {
  const out: string[] = [];
  for (const given of dirs) {
    if (typeof given !== 'string' || given.trim() === '') throw new UsageError('--plugin-dir needs a folder');
    if (given.includes('\0')) throw new UsageError('--plugin-dir contains a NUL byte');
    let real: string;
    try {
      real = fs.realpathSync.native(path.resolve(given));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UsageError(`--plugin-dir ${given}: ${code === 'ENOENT' ? 'no such folder' : (e as Error).message}`);
    }
    if (!fs.statSync(real).isDirectory()) throw new UsageError(`--plugin-dir ${given}: not a folder`);
    if (path.dirname(real) === real)
      throw new UsageError(`--plugin-dir ${given}: the root folder would trust every file on the machine; name the folder that holds the plugin libraries`);
    for (const f of opts.forbidden ?? []) {
      const fdir = realpathOrResolved(f.dir);
      const hit = (!f.pattern && overlaps(real, fdir)) || (f.pattern && (real === fdir || strictlyInside(real, fdir) || matchingChild(fdir, real, f.pattern) !== undefined));
      if (hit) {
        throw new UsageError(
          `--plugin-dir ${given}${real !== path.resolve(given) ? ` (${real})` : ''}: overlaps ${f.what} (${f.pattern ? `${fdir}${path.sep}${f.pattern.source}` : fdir}), where clients can write files; keep plugin libraries in a folder of their own`,
        );
      }
    }
    if (!out.includes(real)) out.push(real);
  }
  return { kind: 'dirs', dirs: out };
}

/** The folder directly under `parent` on the way to `p`, when its name matches `pattern`. */
function matchingChild(parent: string, p: string, pattern: RegExp): string | undefined {
  if (!strictlyInside(parent, p)) return undefined;
  const first = path.relative(parent, p).split(path.sep)[0];
  return pattern.test(first) ? path.join(parent, first) : undefined;
}

/** The policy's folders in both forms: as configured and as their real path now. */
function trustedFolders(dirs: readonly string[]): { given: string; real: string }[] {
  return dirs.map((d) => ({ given: path.resolve(d), real: realpathOrResolved(d) }));
}

function describeFolders(dirs: readonly string[]): string {
  return dirs.map((d) => path.resolve(d)).join(', ');
}

/**
 * Plugin libraries (staticPlugins, dynamicPlugins, pluginsToSerialize), before any worker starts
 * and before anything reads them (the manifest and the reuse key hash them later):
 * - `any`: made absolute (a worker may run elsewhere), each an existing regular file.
 * - `dirs`: a path not lexically inside a trusted folder is refused without touching the file
 *   system (no "not found" versus "outside" to learn which files exist); one inside is resolved
 *   through symlinks and `..` and must still be a regular file strictly inside a trusted folder
 *   (real paths compared). The option then holds that real path: the manifest records it and the
 *   worker opens it, not the name the client gave, so a link inside the folder that is re-pointed
 *   after this check does not change what loads.
 *   What remains between this check and the worker's dlopen: a folder on the real path that is
 *   itself replaced (renamed, or swapped for a symlink) in between. Only someone who can write
 *   inside the trusted folder can do that, and that is the operator's to prevent (the folders
 *   should be writable by the operator alone). Whether the file is a plugin library only
 *   TensorRT can tell, when it loads it.
 */
export function checkPluginLibraries(options: BuildOptions, policy: PluginPolicy = { kind: 'any' }): void {
  const folders = policy.kind === 'dirs' ? trustedFolders(policy.dirs) : [];
  for (const what of PLUGIN_OPTIONS) {
    const list = options[what];
    if (!list) continue;
    options[what] = list.map((p, i) => {
      const name = `${what}[${i}]`;
      if (typeof p !== 'string' || p.length === 0) throw bad(`${name} is required`);
      if (p.includes('\0')) throw bad(`${name} contains a NUL byte`);
      const abs = path.resolve(p);
      if (policy.kind === 'any') return existingFile(what, abs, abs);
      if (folders.length === 0) {
        throw bad(`${name}: this service loads no plugin libraries: start it with --plugin-dir <folder> (asked for ${abs})`);
      }
      const outside = () =>
        bad(`${name}: ${abs} is not inside a plugin folder of this service (allowed: ${describeFolders(policy.dirs)}); its operator names them with --plugin-dir`);
      if (!folders.some((f) => strictlyInside(f.given, abs) || strictlyInside(f.real, abs))) throw outside();
      let real: string;
      try {
        real = fs.realpathSync.native(abs);
      } catch {
        throw bad(`${what}: plugin library not found: ${abs}`);
      }
      if (!folders.some((f) => strictlyInside(f.real, real))) {
        throw bad(`${name}: ${abs} resolves to ${real}, outside the plugin folders of this service (allowed: ${describeFolders(policy.dirs)})`);
      }
      return existingFile(what, real, abs);
    });
  }
}

/**
 * A path a build would write (engine, timing cache, layer file) that lies inside a trusted plugin
 * folder: a client that could write there could plant the next library it names. Refused with the
 * option's name; nothing for `any`. Real paths compared, so a link out of the folder or into it
 * counts where it lands (a file that does not exist yet is judged by its folder).
 */
export function refuseWriteIntoPluginDirs(policy: PluginPolicy, target: string, what: string): void {
  if (policy.kind !== 'dirs' || policy.dirs.length === 0) return;
  const abs = path.resolve(target);
  let real = realpathOrResolved(abs);
  if (real === abs && !fs.existsSync(abs)) real = path.join(realpathOrResolved(path.dirname(abs)), path.basename(abs));
  for (const f of trustedFolders(policy.dirs)) {
    if (real === f.real || strictlyInside(f.real, real) || strictlyInside(f.given, abs)) {
      throw bad(`${what} ${abs} is inside the plugin folder ${f.given}: builds never write where plugin libraries are loaded from`);
    }
  }
}

/** `file` itself (no symlink followed past this point for `dirs`), which must be a regular file. */
function existingFile(what: string, file: string, shown: string): string {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    throw bad(`${what}: plugin library not found: ${shown}`);
  }
  if (!st.isFile()) throw bad(`${what}: plugin library is not a file: ${shown}`);
  return file;
}
