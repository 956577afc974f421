#!/usr/bin/env node
// `npm run demo`: generates a ResNet-like ONNX model (nobody has to bring one to try the app) and
// builds it in the terminal with the live phase tree. Without TensorRT the build is simulated,
// and says so; Ctrl-C stops it at the next step boundary.
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const gen = path.join(root, 'dist/test/support/onnx-gen.js');
if (!fs.existsSync(gen)) {
  console.error('demo: dist/ is missing; run `npm install` (or `npm run build`) first');
  process.exit(2);
}
const { writeModel } = require(gen);
const dir = path.join(root, 'build', 'examples');
fs.mkdirSync(dir, { recursive: true });
const model = writeModel(path.join(dir, 'resnet-like.onnx'), { layers: 300 });
const dynamic = writeModel(path.join(dir, 'dynamic.onnx'), { layers: 40, dynamic: true });
console.log(`example models: ${model}\n                ${dynamic}  (dynamic: needs --shapes)\n`);

const args = [
  path.join(root, 'bin/trt-build-studio.js'), 'build', model,
  '-o', path.join(dir, 'resnet-like.engine'),
  '--timing-cache', path.join(dir, 'timing.cache'),
  '--sim-duration', process.env.TBS_DEMO_SECONDS || '20',
  ...process.argv.slice(2),
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
