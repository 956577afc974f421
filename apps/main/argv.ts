// Finds the model to open in a command line, both our own (process.argv at start) and the one a
// second instance forwards. Electron and Chromium add switches of their own (Playwright adds
// --inspect and --remote-debugging-port), and in development argv[1] is the app folder ('.'), so
// only an argument that names an .onnx file counts.
import path from 'node:path';

export function modelPathFromArgv(argv: readonly string[], cwd: string, isPackaged: boolean): string | null {
  // Packaged: [app, ...args]. Development: [electron, appPath, ...args].
  const args = argv.slice(isPackaged ? 1 : 2);
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    if (!/\.onnx$/i.test(arg)) continue;
    return path.resolve(cwd, arg);
  }
  return null;
}
