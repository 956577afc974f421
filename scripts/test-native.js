#!/usr/bin/env node
// npm run test:native — builds the addon and the C++ tests (cmake-js, build/native) and runs
// them with ctest. Prints ctest's summary; exits non-zero if the build or any test fails.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const buildDir = path.join(root, 'build', 'native');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) {
    console.error(`test:native: cannot run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  return r.status ?? 1;
}

if (!process.argv.includes('--no-build')) {
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  if (run(process.execPath, [cmakeJs, 'compile', '--out', 'build/native']) !== 0) {
    console.error('test:native: build failed');
    process.exit(1);
  }
}
// Serial on purpose: several tests assert wall-clock bounds (cancel latency, warm vs cold).
const status = run('ctest', ['--test-dir', buildDir, '--output-on-failure', '--timeout', '180']);
if (status !== 0) console.error(`test:native: ctest failed (exit ${status})`);
process.exit(status === 0 ? 0 : 1);
