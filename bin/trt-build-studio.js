#!/usr/bin/env node
// The package's command. The CLI is TypeScript compiled to dist/ (`npm run build:ts`).
'use strict';
// Signal handlers before anything else loads (a small module with no imports): a SIGINT or
// SIGTERM that arrives while the CLI's modules load is kept and handed to the command once it
// listens, instead of killing the process the default way (apps/service/process-signals.ts).
// Only a signal during Node's own start-up, before this line runs, cannot be caught.
try {
  require('../dist/apps/service/process-signals.js').processSignals();
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
