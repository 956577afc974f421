#!/usr/bin/env node
// The package's command. The CLI is TypeScript compiled to dist/ (`npm run build:ts`).
'use strict';
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
