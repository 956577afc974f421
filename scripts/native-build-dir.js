// What `npm run build:native` and `npm run test:native` share: a build folder is reconfigured
// when TENSORRT_ROOT differs from the value it was configured with. CMake keeps a cached
// variable unless told otherwise, so without this a build after switching header sets (or back
// to none) would quietly keep the old TensorRT adapters.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cmakeJs = () => require.resolve('cmake-js/bin/cmake-js', { paths: [root] });

/** Runs a command in the repository root, inheriting stdio; its exit status (1 when it could not start). */
function run(cmd, args, label) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(`${label}: cannot run ${cmd}: ${r.error.message}`);
    return 1;
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

/**
 * Reconfigures `out` (relative to the repository) from scratch when it was configured with
 * another TENSORRT_ROOT. Compiled objects stay; only what the new header set changes is rebuilt.
 * Returns false when the configure failed.
 */
function reconfigureIfTensorRtRootChanged(out, label) {
  const dir = path.resolve(root, out);
  const wanted = process.env.TENSORRT_ROOT ?? '';
  const configured = configuredTensorRtRoot(dir);
  if (configured === undefined || configured === wanted) return true;
  console.log(`${label}: ${out} was configured with TENSORRT_ROOT=${configured || '(none)'}, now ${wanted || '(none)'}: reconfiguring`);
  fs.rmSync(path.join(dir, 'CMakeCache.txt'), { force: true });
  return run(process.execPath, [cmakeJs(), 'configure', '--out', out], label) === 0;
}

module.exports = { root, cmakeJs, run, configuredTensorRtRoot, reconfigureIfTensorRtRootChanged };
