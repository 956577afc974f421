#!/usr/bin/env node
// npm run app: the desktop app from this checkout. Electron's npm package fetches its binary from
// GitHub releases the first time it runs, with tools that need Node >= 22.12; where that cannot
// happen (an older Node, no route to GitHub) this says so in one paragraph, with what to do,
// instead of a stack trace from inside Electron's installer.
// ELECTRON_OVERRIDE_DIST_PATH (Electron's own variable) runs an unpacked Electron 45 from a folder.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
const fail = (lines) => {
  console.error(lines.join('\n'));
  process.exit(1);
};

if (!fs.existsSync(path.join(root, 'dist', 'apps', 'main', 'main.js'))) {
  fail(['The app is not built yet: run "npm run build" (npm install does it too).']);
}

let binary;
if (override) {
  binary = path.join(override, 'electron');
  if (!fs.existsSync(binary)) fail([`ELECTRON_OVERRIDE_DIST_PATH=${override} has no "electron" in it: point it at an unpacked Electron 45 folder.`]);
} else {
  const pkgDir = path.join(root, 'node_modules', 'electron');
  const pathFile = path.join(pkgDir, 'path.txt');
  const fetched = fs.existsSync(pathFile) && fs.existsSync(path.join(pkgDir, 'dist', fs.readFileSync(pathFile, 'utf8').trim()));
  if (!fetched) {
    const [major, minor] = process.versions.node.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 12)) {
      fail([
        `The Electron binary is not downloaded yet, and Electron's downloader needs Node >= 22.12 (this is Node ${process.versions.node}).`,
        'Everything else in this project (the build, the CLI, the service, the tests) runs on Node 20.19 or newer; only',
        'fetching and packaging Electron needs the newer one. Either run "npm run app" once with Node >= 22.12, or unpack',
        'electron-v45.3.4-linux-x64.zip yourself and run: ELECTRON_OVERRIDE_DIST_PATH=/path/to/electron-v45 npm run app',
        'Without a desktop, "npm start" serves the same UI to a browser.',
      ]);
    }
    console.log('Downloading the Electron binary (first run only)...');
  }
  try {
    binary = require(pkgDir);
  } catch (e) {
    fail([
      `The Electron binary could not be downloaded (it comes from GitHub releases): ${String(e && e.message).split('\n')[0]}`,
      'Unpack electron-v45.3.4-linux-x64.zip yourself and run: ELECTRON_OVERRIDE_DIST_PATH=/path/to/electron-v45 npm run app',
      'Without a desktop, "npm start" serves the same UI to a browser.',
    ]);
  }
}

const child = spawn(binary, [root, ...process.argv.slice(2)], { stdio: 'inherit' });
child.on('error', (e) => fail([`Could not start ${binary}: ${e.message}`]));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
