// The packaging config, checked three ways:
//  1. always: electron-builder.yml parsed and held to what the app needs at run time;
//  2. when dist/ and the addon are built: a real `electron-builder --dir` run against a stand-in
//     Electron distribution (a shell script named `electron`; the real one cannot be downloaded
//     here) — this exercises our file selection, asar packing and unpacking exactly, and skips
//     only what needs the real binary (flipping fuses);
//  3. when ELECTRON_DIST names a local unpacked Electron: the same with the real thing, fuses and
//     all. Otherwise skipped with the reason printed.
// js-yaml and @electron/asar come with electron-builder (they are its own dependencies).
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/onnx-gen.js';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require('js-yaml') as { load(s: string): unknown };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const asar = require('@electron/asar') as { listPackage(p: string): string[]; extractFile(p: string, f: string): Buffer };

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const CONFIG_FILE = path.join(ROOT, 'electron-builder.yml');
const BUILDER = path.join(ROOT, 'node_modules', 'electron-builder', 'cli.js');
const ADDON = 'build/native/Release/trt_build_studio.node';

interface BuilderConfig {
  appId: string;
  productName: string;
  directories: { output: string; buildResources?: string };
  files: string[];
  asar?: boolean;
  asarUnpack: string[];
  npmRebuild?: boolean;
  electronFuses?: Record<string, boolean>;
  linux: { target: string[]; executableName: string; maintainer?: string; category?: string };
  [k: string]: unknown;
}

const config = yaml.load(readFileSync(CONFIG_FILE, 'utf8')) as BuilderConfig;
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string> };

describe('electron-builder.yml', () => {
  it('builds the three Linux targets', () => {
    expect([...config.linux.target].sort()).toEqual(['AppImage', 'deb', 'dir']);
    // deb refuses to build without a maintainer (package.json has no author).
    expect(config.linux.maintainer).toMatch(/<.+@.+>/);
    expect(config.linux.executableName).toMatch(/^[a-z0-9-]+$/);
  });

  it('ships the compiled app, the package manifest and the addon, and unpacks the addon from asar', () => {
    expect(config.files).toEqual(expect.arrayContaining(['package.json', 'dist/**/*', ADDON.replace('trt_build_studio.node', '*.node')]));
    expect(config.asar).not.toBe(false);
    expect(config.asarUnpack).toContain('**/*.node');
    expect(pkg.main).toBe('dist/apps/main/main.js');
  });

  it('keeps electron-builder from dropping build/ (its default buildResources folder)', () => {
    expect(config.directories.buildResources ?? 'build').not.toBe('build');
  });

  it('does not rebuild native modules (the addon is Node-API), and keeps rebuild:deps for others', () => {
    expect(config.npmRebuild).toBe(false);
    expect(pkg.scripts['rebuild:deps']).toMatch(/^electron-rebuild /);
    expect(pkg.scripts['rebuild:deps']).not.toContain('placeholder');
  });

  it('closes the Node back doors in the shipped binary but keeps what the worker needs', () => {
    expect(config.electronFuses).toMatchObject({ runAsNode: false, enableNodeOptionsEnvironmentVariable: false, enableNodeCliInspectArguments: false });
  });
});

/**
 * A copy of what gets packed, taken at once: other processes on a shared machine rebuild dist/
 * while electron-builder runs for tens of seconds, and a file that changes size between its stat
 * and its copy corrupts the archive (seen here: package.json's slot holding CSS).
 * node_modules is linked, not copied.
 */
function stageProject(): string {
  const stage = tempDir('tbs-stage-');
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, f), path.join(stage, f));
  cpSync(path.join(ROOT, 'dist'), path.join(stage, 'dist'), { recursive: true });
  mkdirSync(path.join(stage, path.dirname(ADDON)), { recursive: true });
  copyFileSync(path.join(ROOT, ADDON), path.join(stage, ADDON));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(stage, 'node_modules'), 'dir');
  return stage;
}

/** Packs with electron-builder into a temp folder; returns the unpacked app directory. */
async function packDir(electronDist: string, withFuses: boolean): Promise<{ appDir: string; stage: string }> {
  const stage = stageProject();
  const out = tempDir('tbs-pack-');
  const cfg: BuilderConfig = { ...config, directories: { ...config.directories, output: out }, electronDist, linux: { ...config.linux, target: ['dir'] } };
  if (!withFuses) delete cfg.electronFuses;
  const cfgFile = path.join(out, 'builder.json');
  writeFileSync(cfgFile, JSON.stringify(cfg));
  try {
    await run(process.execPath, [BUILDER, '--linux', 'dir', '--projectDir', stage, '--config', cfgFile], {
      cwd: stage,
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', CI: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`electron-builder failed: ${e.message}\n${(e.stdout ?? '').slice(-3000)}\n${(e.stderr ?? '').slice(-3000)}`);
  }
  return { appDir: path.join(out, 'linux-unpacked'), stage };
}

function checkPackedApp({ appDir, stage }: { appDir: string; stage: string }): void {
  const resources = path.join(appDir, 'resources');
  expect(existsSync(path.join(appDir, config.linux.executableName))).toBe(true);
  const files = new Set(asar.listPackage(path.join(resources, 'app.asar')).map((f) => f.split(path.sep).join('/')));
  for (const f of ['/package.json', `/${pkg.main}`, '/dist/apps/main/preload.cjs', '/dist/apps/worker/worker.js', '/node_modules/zod/package.json']) {
    expect(files, f).toContain(f);
  }
  if (existsSync(path.join(stage, 'dist/renderer/index.html'))) expect(files).toContain('/dist/renderer/index.html');
  // The addon is a real file next to the archive, where dlopen can reach it and app-paths.ts looks.
  const unpackedAddon = path.join(resources, 'app.asar.unpacked', ADDON);
  expect(readFileSync(unpackedAddon).equals(readFileSync(path.join(stage, ADDON)))).toBe(true);
  // Nothing that only serves development.
  const leaks = [...files].filter((f) => /\.map$|\/test\/|\.test\.js$|^\/(apps|native|e2e|docs)\//.test(f) && !f.startsWith('/node_modules/'));
  expect(leaks).toEqual([]);
  // Every require of the packed app's code resolves inside the package: a relative file that was
  // left out, or a devDependency used at run time, would only show when a user starts the app.
  const unresolved: string[] = [];
  for (const f of files) {
    if (!f.startsWith('/dist/apps/') || !/\.c?js$/.test(f)) continue;
    const code = asar.extractFile(path.join(resources, 'app.asar'), f.slice(1)).toString();
    for (const [, spec] of code.matchAll(/\brequire\(["']([^"']+)["']\)/g)) {
      if (spec === 'electron' || spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      if (spec.startsWith('.')) {
        const target = path.posix.join(path.posix.dirname(f), spec);
        if (![target, `${target}.js`, `${target}/index.js`].some((t) => files.has(t))) unresolved.push(`${f} → ${spec}`);
        continue;
      }
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (!files.has(`/node_modules/${name}/package.json`)) unresolved.push(`${f} → ${spec}`);
    }
  }
  expect(unresolved).toEqual([]);
  const packedText = asar.extractFile(path.join(resources, 'app.asar'), 'package.json').toString();
  let packedPkg: { main?: string } = {};
  try {
    packedPkg = JSON.parse(packedText) as { main: string };
  } catch {
    throw new Error(`packed package.json is not JSON (${packedText.length} bytes): ${JSON.stringify(packedText.slice(0, 200))}`);
  }
  expect(packedPkg.main).toBe(pkg.main);
}

const built = [path.join(ROOT, pkg.main), path.join(ROOT, 'dist/apps/main/preload.cjs'), path.join(ROOT, 'dist/apps/worker/worker.js'), path.join(ROOT, ADDON)];
const notBuilt = built.filter((p) => !existsSync(p));
if (notBuilt.length) console.log(`[skip] packaging with a stand-in Electron: not built yet: ${notBuilt.map((p) => path.relative(ROOT, p)).join(', ')}`);

describe.skipIf(notBuilt.length > 0)('electron-builder --dir with a stand-in Electron distribution', () => {
  it('packs the app as configured', async () => {
    const fake = tempDir('tbs-fake-electron-');
    mkdirSync(path.join(fake, 'resources'));
    mkdirSync(path.join(fake, 'locales'));
    writeFileSync(path.join(fake, 'locales', 'en-US.pak'), '');
    writeFileSync(path.join(fake, 'electron'), '#!/bin/sh\necho "stand-in for the Electron binary"\n');
    chmodSync(path.join(fake, 'electron'), 0o755);
    checkPackedApp(await packDir(fake, false));
  }, 180_000);
});

const electronDist = process.env.ELECTRON_DIST;
if (!electronDist) console.log('[skip] electron-builder --dir with a real Electron: set ELECTRON_DIST to an unpacked Electron 45 folder to run it');

describe.skipIf(!electronDist || notBuilt.length > 0)('electron-builder --dir with the real Electron (ELECTRON_DIST)', () => {
  it('packs the app, fuses included', async () => {
    checkPackedApp(await packDir(path.resolve(electronDist!), true));
  }, 300_000);
});
