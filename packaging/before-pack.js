// electron-builder beforePack hook: refuse to pack an app that cannot drive TensorRT.
// The TensorRT adapters (build/native/Release/libtbs_trt<major>.so, one per TensorRT major the
// addon was built against) exist only when the native build had TensorRT headers
// (TENSORRT_ROOT, native/trt.cmake). Without them `files` matches nothing and the package would
// silently ship with the simulated backend only. TBS_PACK_WITHOUT_TENSORRT=1 packs anyway, on
// purpose (a simulator-only build).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ADAPTER = /^libtbs_trt(\d+)\.so$/;
const NATIVE_RELEASE = path.join('build', 'native', 'Release');

/** The adapter files in `dir` ("libtbs_trt10.so", …), sorted; none when the folder is missing. */
function findAdapters(dir) {
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => ADAPTER.test(n)).sort();
}

/**
 * What to do for a pack of `projectDir`: { ok, adapters, message }. `ok` false means refuse;
 * `message` is one line first (what), then how to fix it.
 */
function checkAdapters(projectDir, env = process.env) {
  const dir = path.join(projectDir, NATIVE_RELEASE);
  const adapters = findAdapters(dir);
  if (adapters.length > 0) return { ok: true, adapters, message: `packing TensorRT adapters: ${adapters.join(', ')}` };
  if (env.TBS_PACK_WITHOUT_TENSORRT === '1') {
    return { ok: true, adapters, message: `packing WITHOUT TensorRT adapters (TBS_PACK_WITHOUT_TENSORRT=1): the app will only run simulated builds` };
  }
  return {
    ok: false,
    adapters,
    message: [
      `refusing to pack: no TensorRT adapter (libtbs_trt<major>.so) in ${dir}, so the app could only run simulated builds.`,
      'Build the addon against TensorRT headers first: point TENSORRT_ROOT at a TensorRT install or header folder holding',
      'include/NvInfer.h, NvInferVersion.h and NvOnnxParser.h (several, one per major, separated by ":"), e.g.',
      '  TENSORRT_ROOT=/opt/TensorRT-10.16.0:/opt/TensorRT-11.1.0 npm run build:native',
      'or set TBS_PACK_WITHOUT_TENSORRT=1 to pack a simulator-only app on purpose.',
    ].join('\n'),
  };
}

/** The hook electron-builder calls (config: beforePack: packaging/before-pack.js). */
async function beforePack(context) {
  const projectDir = context.packager.info.projectDir;
  const res = checkAdapters(projectDir);
  if (!res.ok) throw new Error(res.message);
  console.log(`[before-pack] ${res.message}`);
}

module.exports = beforePack;
module.exports.default = beforePack;
module.exports.checkAdapters = checkAdapters;
module.exports.findAdapters = findAdapters;
