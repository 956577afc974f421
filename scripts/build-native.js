#!/usr/bin/env node
// npm run build:native — the addon and the C++ tests in build/native (cmake-js). Reconfigures
// first when TENSORRT_ROOT changed since the folder was configured (scripts/native-build-dir.js).
'use strict';
const { cmakeJs, reconfigureIfTensorRtRootChanged, run } = require('./native-build-dir.js');

const out = 'build/native';
if (!reconfigureIfTensorRtRootChanged(out, 'build:native')) {
  console.error('build:native: configure failed');
  process.exit(1);
}
process.exit(run(process.execPath, [cmakeJs(), 'compile', '--out', out], 'build:native') === 0 ? 0 : 1);
