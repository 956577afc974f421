// The worker's stderr in a file as well as (where the host reads a pipe) in the pipe's place:
// the host names the file in TBS_WORKER_STDERR_FILE (the Electron launcher does, because Electron
// drops a utility process's stderr listeners in the same turn it reports the exit, so the last
// lines of a dying worker never arrive through the pipe). The redirect is made at the file
// descriptor, natively, so it also holds what native code and the C runtime print while dying.
import type { NativeAddonApi } from './native-api.js';
import { WORKER_STDERR_FILE_ENV } from './messages.js';

let done = false;

/** Redirects once, as soon as the addon is loaded; a failure is said on the old stderr and ignored. */
export function redirectStderrIfAsked(addon: Pick<NativeAddonApi, 'redirectStderrToFile'>, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[WORKER_STDERR_FILE_ENV];
  if (done || !file || !addon.redirectStderrToFile) return;
  done = true;
  try {
    addon.redirectStderrToFile(file);
  } catch (e) {
    process.stderr.write(`worker: stderr stays a pipe: ${(e as Error).message}\n`);
  }
}
