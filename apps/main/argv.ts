// Finds the model to open in a command line, both our own (process.argv at start) and the one a
// second instance forwards ('second-instance' passes the same kind of argv, so both go through
// modelPathFromArgv). Electron and Chromium add switches of their own (Playwright adds --inspect
// and --remote-debugging-port), and in development argv[1] is the app folder ('.'), so only an
// argument that names an .onnx file counts.
//
// The file manager starts us through the .desktop entry's `Exec=… %U`, which passes URLs:
// `file:///home/u/My%20Model.onnx`. Those are decoded to paths; a URL of any other scheme (a
// model on a web server, sftp://…) is not a local file and is skipped.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The local path an argument names, or null when it names none (a non-file URL, a bad URL). */
export function localPathOf(arg: string, cwd: string): string | null {
  if (/^file:/i.test(arg)) {
    try {
      // Decodes %-escapes (spaces, UTF-8) and refuses file://otherhost/… on POSIX.
      return fileURLToPath(arg);
    } catch {
      return null;
    }
  }
  if (URL_SCHEME.test(arg)) return null;
  return path.resolve(cwd, arg);
}

export function modelPathFromArgv(argv: readonly string[], cwd: string, isPackaged: boolean): string | null {
  // Packaged: [app, ...args]. Development: [electron, appPath, ...args].
  const args = argv.slice(isPackaged ? 1 : 2);
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    const p = localPathOf(arg, cwd);
    if (p !== null && /\.onnx$/i.test(p)) return p;
  }
  return null;
}
