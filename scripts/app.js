#!/usr/bin/env node
// npm run app: the desktop app from this checkout. Electron's npm package fetches its binary from
// GitHub releases the first time it runs, with tools that need Node >= 22.12; where that cannot
// happen (an older Node, no route to GitHub) this says so in one paragraph, with what to do,
// instead of a stack trace from inside Electron's installer.
// ELECTRON_OVERRIDE_DIST_PATH (Electron's own variable) runs an unpacked Electron 45 from a folder.
// `npm run app -- --unpacked [model.onnx]` runs the packed app electron-builder left in
// release/linux-unpacked instead, with the same sandbox checks.
//
// The sandbox on Ubuntu 24.04 (and any kernel with kernel.apparmor_restrict_unprivileged_userns=1):
// Chromium's sandbox needs an unprivileged user namespace, which AppArmor then grants only to
// binaries its profiles name (the deb installs one for /opt/TRT Build Studio/…). Anywhere else
// Chromium falls back to the SUID helper `chrome-sandbox` beside the binary, which works only when
// it is owned by root with mode 4755; otherwise Chromium aborts before any app code runs ("No
// usable sandbox!"). So this script checks before launching, and reads the child's stderr after a
// launch that ends at once, and in both cases says exactly why and the one command that fixes it.
// It never adds --no-sandbox: the renderer shows names from any file and keeps its OS sandbox.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const USERNS_RESTRICTION = '/proc/sys/kernel/apparmor_restrict_unprivileged_userns';
/** What Chromium prints when it gives up on the sandbox (zygote_host_impl_linux.cc, setuid_sandbox_host.cc). */
const SANDBOX_ERRORS = [/No usable sandbox!/, /SUID sandbox helper binary was found, but is not configured correctly/];
/** A launch that ends within this many ms, with a sandbox error, is a sandbox failure. */
const EARLY_EXIT_MS = 15_000;

/** The shell-quoted path, for commands people paste. */
const q = (p) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`);

/** The one command that makes `chrome-sandbox` usable (root-owned, setuid). */
function suidCommand(helper) {
  return `sudo chown root:root ${q(helper)} && sudo chmod 4755 ${q(helper)}`;
}

/**
 * Whether Chromium's sandbox can start for `binary` here: null when it can (or this is not
 * Linux), else the message lines saying why and what to run. `fsApi` and `getuid` are for tests.
 */
function sandboxProblem(binary, { platform = process.platform, fsApi = fs } = {}) {
  if (platform !== 'linux') return null;
  let restricted = false;
  try {
    restricted = fsApi.readFileSync(USERNS_RESTRICTION, 'utf8').trim() === '1';
  } catch {
    // No such setting: user namespaces are not restricted by AppArmor here.
  }
  if (!restricted) return null;
  const helper = path.join(path.dirname(binary), 'chrome-sandbox');
  let st = null;
  try {
    st = fsApi.statSync(helper);
  } catch {
    // Missing: said below.
  }
  // Root-owned and setuid: Chromium uses the SUID sandbox, no user namespace needed.
  if (st && st.uid === 0 && (st.mode & 0o4000) !== 0 && (st.mode & 0o777) === 0o755) return null;
  const why = st
    ? `its SUID sandbox helper ${helper} is not owned by root with mode 4755 (it is uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)})`
    : `there is no SUID sandbox helper at ${helper}`;
  return [
    `Cannot start the app: this system restricts unprivileged user namespaces (${USERNS_RESTRICTION} = 1, as on Ubuntu 24.04),`,
    `so Chromium's sandbox cannot start from ${binary}, and ${why}. Set the helper up once (it stays until the`,
    'file is replaced, e.g. by reinstalling Electron or repacking):',
    `  ${suidCommand(helper)}`,
    'or give the binary an AppArmor profile that allows user namespaces (docs/electron.md, "Starting on Ubuntu 24.04").',
    'The app never runs without its sandbox (--no-sandbox); the installed .deb needs neither: it brings its own profile.',
  ];
}

/** Whether a child's stderr shows Chromium giving up on the sandbox. */
function isSandboxFailure(stderrTail) {
  return SANDBOX_ERRORS.some((re) => re.test(stderrTail));
}

/** The lines printed after a launch that died of the sandbox. */
function sandboxFailureMessage(binary) {
  const helper = path.join(path.dirname(binary), 'chrome-sandbox');
  return [
    `The app stopped at launch: Chromium could not start its sandbox (see its message above).`,
    'Unprivileged user namespaces are unavailable here, and its SUID sandbox helper is not set up. Run once:',
    `  ${suidCommand(helper)}`,
    'or give the binary an AppArmor profile that allows user namespaces (docs/electron.md, "Starting on Ubuntu 24.04").',
  ];
}

function fail(lines) {
  console.error(lines.join('\n'));
  process.exit(1);
}

/** The binary and its arguments: the dev Electron with this checkout, or the unpacked packed app. */
function resolveLaunch(argv, env) {
  if (argv[0] === '--unpacked') {
    const binary = path.join(root, 'release', 'linux-unpacked', 'trt-build-studio-app');
    if (!fs.existsSync(binary)) fail([`No unpacked app at ${binary}: run "npm run dist:linux" first.`]);
    return { binary, args: argv.slice(1) };
  }
  if (!fs.existsSync(path.join(root, 'dist', 'apps', 'main', 'main.js'))) {
    fail(['The app is not built yet: run "npm run build" (npm install does it too).']);
  }
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    const binary = path.join(override, 'electron');
    if (!fs.existsSync(binary)) fail([`ELECTRON_OVERRIDE_DIST_PATH=${override} has no "electron" in it: point it at an unpacked Electron 45 folder.`]);
    return { binary, args: [root, ...argv] };
  }
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
    return { binary: require(pkgDir), args: [root, ...argv] };
  } catch (e) {
    return fail([
      `The Electron binary could not be downloaded (it comes from GitHub releases): ${String(e && e.message).split('\n')[0]}`,
      'Unpack electron-v45.3.4-linux-x64.zip yourself and run: ELECTRON_OVERRIDE_DIST_PATH=/path/to/electron-v45 npm run app',
      'Without a desktop, "npm start" serves the same UI to a browser.',
    ]);
  }
}

function main() {
  const { binary, args } = resolveLaunch(process.argv.slice(2), process.env);
  const problem = sandboxProblem(binary);
  if (problem) fail(problem);

  const started = Date.now();
  // stderr passes through, and its tail is kept to recognise a sandbox abort.
  const child = spawn(binary, args, { stdio: ['inherit', 'inherit', 'pipe'] });
  let tail = '';
  child.stderr.on('data', (chunk) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString()).slice(-8192);
  });
  child.on('error', (e) => fail([`Could not start ${binary}: ${e.message}`]));
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    if ((code !== 0 || signal) && Date.now() - started < EARLY_EXIT_MS && isSandboxFailure(tail)) fail(sandboxFailureMessage(binary));
    process.exit(code ?? (signal ? 1 : 0));
  });
}

if (require.main === module) main();

module.exports = { sandboxProblem, isSandboxFailure, sandboxFailureMessage, suidCommand, USERNS_RESTRICTION };
