#!/usr/bin/env node
// npm run test:native — builds the addon and the C++ tests (cmake-js, build/native) and runs
// them with ctest. Prints ctest's summary; exits non-zero if the build or any test fails.
//
//   npm run test:native                          build/native, TensorRT headers from TENSORRT_ROOT
//   npm run test:native -- --out build/trt-a     another build folder (one per header set)
//   npm run test:native -- --no-build            only run ctest
//
// TENSORRT_ROOT decides which TensorRT adapters and tests exist (native/trt.cmake), and CMake
// keeps the value it was configured with in its cache. A build folder configured with another
// value (or with one when there is none now) is reconfigured first, so switching header sets, or
// back to none, needs no manual clean.
'use strict';
const path = require('node:path');
const { cmakeJs, reconfigureIfTensorRtRootChanged, root, run } = require('./native-build-dir.js');

function option(name) {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) {
      if (i + 1 >= args.length) {
        console.error(`test:native: ${name} needs a value`);
        process.exit(2);
      }
      return args[i + 1];
    }
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

const out = option('--out') ?? path.join('build', 'native');
const buildDir = path.resolve(root, out);

if (!process.argv.includes('--no-build')) {
  if (!reconfigureIfTensorRtRootChanged(out, 'test:native')) {
    console.error('test:native: configure failed');
    process.exit(1);
  }
  // `build`, not `compile`: a compile error should fail now, not start a clean full rebuild.
  if (run(process.execPath, [cmakeJs(), 'build', '--out', out], 'test:native') !== 0) {
    console.error('test:native: build failed');
    process.exit(1);
  }
}
// Serial on purpose: several tests assert wall-clock bounds (cancel latency, warm vs cold).
const status = run('ctest', ['--test-dir', buildDir, '--output-on-failure', '--timeout', '180'], 'test:native');
if (status !== 0) console.error(`test:native: ctest failed (exit ${status})`);
process.exit(status === 0 ? 0 : 1);
