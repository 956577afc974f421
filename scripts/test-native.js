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
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

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

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) {
    console.error(`test:native: cannot run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  return r.status ?? 1;
}

// The TENSORRT_ROOT a build folder was configured with ('' when none), or undefined when the
// folder has never been configured.
function configuredTensorRtRoot(dir) {
  let text;
  try {
    text = fs.readFileSync(path.join(dir, 'CMakeCache.txt'), 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  }
  const m = /^TENSORRT_ROOT:[A-Z]+=(.*)$/m.exec(text);
  return m ? m[1] : '';
}

if (!process.argv.includes('--no-build')) {
  const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
  const wanted = process.env.TENSORRT_ROOT ?? '';
  const configured = configuredTensorRtRoot(buildDir);
  if (configured !== undefined && configured !== wanted) {
    // A fresh configure, not an incremental one: without the variable CMake would keep the cached
    // value. Compiled objects stay; only what the new header set changes is rebuilt.
    console.log(
      `test:native: ${out} was configured with TENSORRT_ROOT=${configured || '(none)'}, ` +
        `now ${wanted || '(none)'}: reconfiguring`,
    );
    fs.rmSync(path.join(buildDir, 'CMakeCache.txt'), { force: true });
    if (run(process.execPath, [cmakeJs, 'configure', '--out', out]) !== 0) {
      console.error('test:native: configure failed');
      process.exit(1);
    }
  }
  // `build`, not `compile`: a compile error should fail now, not start a clean full rebuild.
  if (run(process.execPath, [cmakeJs, 'build', '--out', out]) !== 0) {
    console.error('test:native: build failed');
    process.exit(1);
  }
}
// Serial on purpose: several tests assert wall-clock bounds (cancel latency, warm vs cold).
const status = run('ctest', ['--test-dir', buildDir, '--output-on-failure', '--timeout', '180']);
if (status !== 0) console.error(`test:native: ctest failed (exit ${status})`);
process.exit(status === 0 ? 0 : 1);
