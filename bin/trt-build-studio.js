#!/usr/bin/env node
// The CLI's entry in Node. The CLI is TypeScript compiled to dist/ (`npm run build:ts`). Users'
// `trt-build-studio` command (package.json "bin") is the native launcher in front of this file
// (native/launcher/launcher.cc), which owns the moments before this line; `node` runs this file
// directly where the launcher is not built (macOS, Windows) and in MCP/editor configs.
'use strict';
// Signal handlers before anything else loads (a small module with no imports): a SIGINT or
// SIGTERM that arrives while the CLI's modules load is kept and handed to the command once it
// listens, instead of killing the process the default way (apps/process/process-signals.ts).
// A signal during Node's own start-up, before this line runs, kills Node the default way: the
// launcher then ends the output and the exit code as the command would have.
try {
  require('../dist/apps/process/process-signals.js').processSignals();
} catch {
  // Not built yet: the require below says so.
}
let cli;
try {
  cli = require('../dist/apps/cli/main.js');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes('dist/apps/cli/main.js')) {
    process.stderr.write('trt-build-studio: not built yet; run `npm run build:ts` (or `npm install`) first\n');
    process.exit(1);
  }
  throw e;
}
cli.main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), 3000).unref();
  },
  (e) => {
    process.stderr.write(`trt-build-studio: ${(e && e.stack) || e}\n`);
    process.exit(1);
  },
);
