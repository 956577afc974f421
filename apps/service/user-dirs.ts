// The user's own folders (home, XDG state and cache) as absolute paths, or a clear error. An empty
// or relative HOME (`HOME= trt-build-studio build …`) made os.homedir() return "" and the state
// land in `./.local/state/…` of whatever folder the command ran in; an XDG variable that is empty
// or relative is invalid by the XDG spec and is ignored, as the spec says.
import * as os from 'node:os';
import * as path from 'node:path';

/** The home folder: $HOME when it is absolute, else the user database's entry. */
export function homeDir(): string {
  const fromEnv = os.homedir();
  if (path.isAbsolute(fromEnv)) return fromEnv;
  let fromDb = '';
  try {
    fromDb = os.userInfo().homedir;
  } catch {
    // no entry for this uid (a container's arbitrary user)
  }
  if (path.isAbsolute(fromDb)) return fromDb;
  throw new Error(`no home folder: HOME is ${fromEnv ? `the relative path "${fromEnv}"` : 'empty'} and the user database names none; set HOME to an absolute path`);
}

/** $`name` when it is an absolute path, else `~/<fallback>`. */
export function xdgDir(env: NodeJS.ProcessEnv, name: 'XDG_STATE_HOME' | 'XDG_CACHE_HOME' | 'XDG_DATA_HOME', fallback: string): string {
  const v = env[name];
  return v && path.isAbsolute(v) ? v : path.join(homeDir(), fallback);
}
