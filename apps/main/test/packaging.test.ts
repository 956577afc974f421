// The packaging config, checked three ways:
//  1. always: electron-builder.yml and package.json held to what the app and the deb need;
//  2. when dist/ and the addon are built: a real `electron-builder` run for the dir and deb
//     targets, against a stand-in Electron distribution (a shell script named `electron`; the real
//     one cannot be downloaded here) and a stand-in fpm (electron-builder's deb tool, also a
//     download) that records what it was asked to package. The app is packed from a real copy of
//     the production dependencies, as `npm ci` leaves them (a symlinked node_modules makes
//     electron-builder drop dependencies), and the packed app is checked by walking everything
//     main, preload and worker load at run time, node_modules included;
//  3. when ELECTRON_DIST names a local unpacked Electron: the same with the real thing, fuses and
//     all. Otherwise skipped with the reason printed.
// js-yaml and @electron/asar come with electron-builder (they are its own dependencies).
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir as makeTempDir } from '../../../test/support/onnx-gen.js';
import { walkRequires } from './require-graph.js';

const yaml = require('js-yaml') as { load(s: string): unknown };
const asar = require('@electron/asar') as { listPackage(p: string): string[]; extractFile(p: string, f: string): Buffer; extractAll(p: string, dest: string): void };

const run = promisify(execFile);

// Each pack stages ~50 MB of dependencies and writes as much again: all of it goes at the end.
const scratchDirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = makeTempDir(prefix);
  scratchDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});
const ROOT = path.resolve(__dirname, '../../..');
const CONFIG_FILE = path.join(ROOT, 'electron-builder.yml');
const BUILDER = path.join(ROOT, 'node_modules', 'electron-builder', 'cli.js');
const ADDON = 'build/native/Release/trt_build_studio.node';
// The addon build that is packed: build/native (whatever headers it had) unless TBS_PACK_NATIVE_DIR
// names another build folder, e.g. build/native-trt configured with TENSORRT_ROOT naming 10.x and
// 11.x headers, so that the package carries both adapters.
const PACK_NATIVE_DIR = path.resolve(ROOT, process.env.TBS_PACK_NATIVE_DIR ?? 'build/native');
const packAddon = path.join(PACK_NATIVE_DIR, 'Release', path.basename(ADDON));

/**
 * The files the addon opens at run time from its own folder, asked of the addon itself: the
 * adapter of each TensorRT major it was built with (`adapters` of listBackends(); trt_host.cc opens
 * <addon folder>/libtbs_trt<major>.so). JS requires are followed by walkRequires; this is what
 * dlopen needs, which no require graph shows.
 */
function addonRuntimeFiles(addonPath: string): string[] {
  const script = `require(${JSON.stringify(addonPath)}).listBackends().then((b) => process.stdout.write(JSON.stringify(b)))`;
  const backends = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { name: string; adapters?: { major: number }[] }[];
  const adapters = backends.find((b) => b.name === 'tensorrt')?.adapters ?? [];
  // The name the host builds, checked in the binary so this list cannot drift from trt_host.cc.
  if (adapters.length) expect(readFileSync(addonPath).includes('libtbs_trt')).toBe(true);
  return adapters.map((a) => `libtbs_trt${a.major}.so`);
}

// Which shipped files a pattern of electron-builder.yml takes (only a star and a leading
// double-star folder are used there).
function globToRegExp(glob: string): RegExp {
  const parts = glob.split('**/').map((p) => p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'));
  return new RegExp(`^${parts.join('(?:.*/)?')}$`);
}

interface BuilderConfig {
  appId: string;
  productName: string;
  directories: { output: string; buildResources?: string };
  files: string[];
  asar?: boolean;
  asarUnpack: string[];
  npmRebuild?: boolean;
  electronFuses?: Record<string, boolean>;
  linux: {
    target: string[];
    executableName: string;
    maintainer?: string;
    category?: string;
    icon?: string;
    syncDesktopName?: boolean;
    mimeTypes?: string[];
    fileAssociations?: Array<{ ext: string; name?: string; description?: string; mimeType?: string }>;
  };
  deb?: { depends?: string[]; appArmorProfile?: string; afterInstall?: string };
  beforePack?: string;
  [k: string]: unknown;
}

interface PackageJson {
  main: string;
  productName?: string;
  desktopName?: string;
  homepage?: string;
  author?: { name?: string; email?: string } | string;
  scripts: Record<string, string>;
  bin?: Record<string, string>;
}

const config = yaml.load(readFileSync(CONFIG_FILE, 'utf8')) as BuilderConfig;
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;

/** Debian's libstdc++6 version (the GCC release) that first provides a GLIBCXX symbol version. */
const GLIBCXX_TO_GCC: Record<string, number> = { '3.4.28': 10, '3.4.29': 11, '3.4.30': 12, '3.4.31': 13, '3.4.32': 13, '3.4.33': 14 };

const cmpVersion = (a: string, b: string) => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};
const newest = (versions: string[]) => versions.sort(cmpVersion).at(-1);
/** "libc6 (>= 2.34)" → "2.34". */
const minimumOf = (depends: string[], name: string) => depends.map((d) => new RegExp(`^${name.replace(/[+.]/g, '\\$&')} \\(>= ([0-9.]+)\\)$`).exec(d)?.[1]).find(Boolean);

describe('electron-builder.yml and package.json', () => {
  it('builds the deb and dir targets, and no AppImage (its desktop entry runs without the OS sandbox)', () => {
    expect([...config.linux.target].sort()).toEqual(['deb', 'dir']);
    expect(config.linux.executableName).toMatch(/^[a-z0-9-]+$/);
    // The reason is written down where people look for it.
    expect(readFileSync(path.join(ROOT, 'docs', 'electron.md'), 'utf8')).toMatch(/no AppImage[\s\S]*--no-sandbox/i);
  });

  it('declares in the deb every system library the Electron binary links (libgbm1 and libasound2 included)', () => {
    const depends = config.deb?.depends ?? [];
    const lines = readFileSync(path.join(ROOT, 'packaging', 'electron-linked-libraries.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    const libs = lines.map((l) => ({ soname: l.split(/\s+/)[0], pkg: l.slice(l.indexOf(' ') + 1).trim() }));
    expect(libs.map((l) => l.soname)).toEqual(expect.arrayContaining(['libgbm.so.1', 'libasound.so.2', 'libnss3.so', 'libxkbcommon.so.0', 'libdrm.so.2']));
    const missing = libs.filter((l) => !depends.includes(l.pkg)).map((l) => `${l.soname} (${l.pkg})`);
    expect(missing, 'add these to deb.depends in electron-builder.yml').toEqual([]);
    // What the app itself uses at run time beyond what the binary links.
    expect(depends).toEqual(expect.arrayContaining(['libnotify4', 'xdg-utils', 'libsecret-1-0', 'libuuid1', 'libxss1', 'libxtst6']));
    // Each alternative on Ubuntu 24.04 is the same library under its 64-bit time_t name.
    for (const d of depends.filter((x) => x.includes('|'))) {
      const [a, b] = d.split('|').map((x) => x.trim());
      expect(b.replace(/t64$/, ''), d).toBe(a);
    }
  });

  it('gives the window its icon from inside the app (BrowserWindow icon), not only the installed .desktop entry', () => {
    expect(config.files).toContain('packaging/icon.png');
    const window = readFileSync(path.join(ROOT, 'apps', 'main', 'window.ts'), 'utf8');
    expect(window).toMatch(/icon: opts\.iconPath/);
  });

  it('has the metadata the deb target refuses to build without (homepage, author with email)', () => {
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(typeof pkg.author === 'object' && pkg.author.email).toMatch(/^[^@\s]+@[^@\s]+$/);
  });

  it('gives the app one identity: product name, and a .desktop name that becomes the window app id', () => {
    expect(pkg.productName).toBe('TRT Build Studio');
    expect(config.productName).toBe(pkg.productName);
    // Electron takes desktopName as the Wayland app id / X11 WM_CLASS; with syncDesktopName the
    // .desktop file carries the same name and StartupWMClass (checked on the built deb below).
    expect(pkg.desktopName).toBe('trt-build-studio.desktop');
    expect(config.linux.syncDesktopName).toBe(true);
  });

  it("gives the GUI an executable name of its own: the CLI's name stays the CLI's", () => {
    // The deb links /usr/bin/<executableName> (checked on its after-install script below).
    expect(Object.keys(pkg.bin ?? {})).toContain('trt-build-studio');
    expect(config.linux.executableName).toBe('trt-build-studio-app');
    expect(Object.keys(pkg.bin ?? {})).not.toContain(config.linux.executableName);
  });

  it('declares the ONNX type once, with a description (the .desktop MimeType and the MIME package)', () => {
    // electron-builder adds every fileAssociations mimeType to MimeType= itself: a mimeTypes list
    // naming it again wrote it twice.
    expect(config.linux.mimeTypes ?? []).not.toContain('application/x-onnx');
    expect(config.linux.fileAssociations).toEqual([{ ext: 'onnx', name: 'ONNX model', description: 'ONNX model', mimeType: 'application/x-onnx' }]);
  });

  it("keeps electron-builder's AppArmor profile in the deb (Ubuntu 24.04 needs it for the sandbox)", () => {
    // The default profile (flags=(unconfined), userns) is installed by the default after-install
    // script; replacing either would have to keep both (checked on the built deb below).
    expect(config.deb?.appArmorProfile).toBeUndefined();
    expect(config.deb?.afterInstall).toBeUndefined();
  });

  it('runs the TensorRT-adapter check before packing', () => {
    expect(config.beforePack).toBe('./packaging/before-pack.js');
    expect(existsSync(path.join(ROOT, config.beforePack!))).toBe(true);
  });

  it('has an icon: a 512×512 PNG in packaging/, the one packaging/make-icon.js draws', () => {
    expect(config.linux.icon).toBe('packaging/icon.png');
    const png = readFileSync(path.join(ROOT, config.linux.icon!));
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([512, 512]);
    const redrawn = path.join(tempDir('tbs-icon-'), 'icon.png');
    execFileSync(process.execPath, [path.join(ROOT, 'packaging', 'make-icon.js'), redrawn]);
    expect(readFileSync(redrawn).equals(png)).toBe(true);
  });

  it('dist:linux builds first and never publishes', () => {
    expect(pkg.scripts['dist:linux']).toBe('npm run build && electron-builder --linux --publish never');
  });

  it('ships the compiled app, the package manifest and the addon, and unpacks the addon from asar', () => {
    expect(config.files).toEqual(expect.arrayContaining(['package.json', 'dist/**/*', ADDON.replace('trt_build_studio.node', '*.node')]));
    expect(config.asar).not.toBe(false);
    expect(config.asarUnpack).toContain('**/*.node');
    expect(pkg.main).toBe('dist/apps/main/main.js');
  });

  it('ships every TensorRT adapter the addon loads, unpacked beside it (dlopen cannot read asar)', () => {
    const adapter = 'build/native/Release/libtbs_trt10.so';
    expect(config.files.some((f) => globToRegExp(f).test(adapter))).toBe(true);
    expect(config.asarUnpack.some((f) => globToRegExp(f).test(adapter))).toBe(true);
    expect(config.asarUnpack.some((f) => globToRegExp(f).test('build/native/Release/libtbs_trt11.so'))).toBe(true);
    // Every file the built addon would open from its folder is taken by the same patterns.
    if (existsSync(packAddon)) {
      for (const f of addonRuntimeFiles(packAddon)) {
        const rel = `build/native/Release/${f}`;
        expect(
          config.files.some((g) => globToRegExp(g).test(rel)),
          rel,
        ).toBe(true);
        expect(
          config.asarUnpack.some((g) => globToRegExp(g).test(rel)),
          rel,
        ).toBe(true);
      }
    }
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

  const addon = path.join(ROOT, ADDON);
  let objdump: string | null = null;
  try {
    if (existsSync(addon)) objdump = execFileSync('objdump', ['-T', addon], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch {
    objdump = null;
  }
  if (!objdump) console.log('[skip] deb dependencies against the addon: the addon is not built or objdump is missing');
  it.skipIf(!objdump)('declares, in the deb, the glibc and libstdc++ the built addon links against', () => {
    const versions = (prefix: string) => [...new Set([...objdump!.matchAll(new RegExp(`\\b${prefix}_([0-9.]+)\\b`, 'g'))].map((m) => m[1]))];
    const glibc = newest(versions('GLIBC'))!;
    const glibcxx = newest(versions('GLIBCXX'))!;
    const depends = config.deb?.depends ?? [];
    const libc = minimumOf(depends, 'libc6');
    const libstdcxx = minimumOf(depends, 'libstdc++6');
    expect(libc, `deb.depends needs "libc6 (>= ${glibc})"`).toBeDefined();
    expect(cmpVersion(libc!, glibc), `the addon needs GLIBC_${glibc}; deb declares libc6 >= ${libc}`).toBeGreaterThanOrEqual(0);
    const gcc = GLIBCXX_TO_GCC[glibcxx];
    expect(gcc, `GLIBCXX_${glibcxx} is not in the table above: add the GCC release that introduced it`).toBeDefined();
    expect(libstdcxx, `deb.depends needs "libstdc++6 (>= ${gcc})"`).toBeDefined();
    expect(Number(libstdcxx!.split('.')[0]), `the addon needs GLIBCXX_${glibcxx} (GCC ${gcc})`).toBeGreaterThanOrEqual(gcc);
  });
});

/**
 * The production dependencies as `npm ls --omit=dev` lists them, copied (not linked) into `dest`
 * with the same layout, nested node_modules included.
 */
function copyProductionDependencies(dest: string): string[] {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
  const dirs = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && path.resolve(l) !== ROOT);
  for (const dir of dirs) {
    const rel = path.relative(ROOT, dir);
    if (!rel.startsWith('node_modules')) throw new Error(`npm ls listed a dependency outside node_modules: ${dir}`);
    // Each package without its own node_modules: nested production deps are in the list themselves.
    cpSync(dir, path.join(dest, rel), { recursive: true, filter: (src) => src === dir || !path.relative(dir, src).split(path.sep).includes('node_modules') });
  }
  return dirs.map((d) => path.relative(ROOT, d).split(path.sep).join('/'));
}

/**
 * A copy of what gets packed, taken at once: other processes on a shared machine rebuild dist/
 * while electron-builder runs, and a file that changes size between its stat and its copy
 * corrupts the archive (seen here: package.json's slot holding CSS).
 */
function stageProject(): { stage: string; deps: string[] } {
  const stage = tempDir('tbs-stage-');
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, f), path.join(stage, f));
  cpSync(path.join(ROOT, 'dist'), path.join(stage, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'packaging'), path.join(stage, 'packaging'), { recursive: true });
  mkdirSync(path.join(stage, path.dirname(ADDON)), { recursive: true });
  copyFileSync(packAddon, path.join(stage, ADDON));
  for (const f of addonRuntimeFiles(packAddon)) copyFileSync(path.join(path.dirname(packAddon), f), path.join(stage, path.dirname(ADDON), f));
  const deps = copyProductionDependencies(stage);
  return { stage, deps };
}

/**
 * fpm (the tool electron-builder's deb target runs; a download) replaced by a script that records
 * its arguments and the .desktop file it was given, and writes an empty package.
 */
function standInFpm(dir: string): { path: string; record: string } {
  const record = path.join(dir, 'fpm-call.json');
  const script = path.join(dir, 'fpm');
  writeFileSync(
    script,
    `#!${process.execPath}
const fs = require('node:fs');
const args = process.argv.slice(2);
const files = {};
for (const a of args) {
  const m = /^(\\/.+)=(\\/usr\\/share\\/(?:applications\\/.+\\.desktop|mime\\/packages\\/.+\\.xml))$/.exec(a);
  if (m) files[m[2]] = fs.readFileSync(m[1], 'utf8');
}
files['after-install'] = fs.readFileSync(args[args.indexOf('--after-install') + 1], 'utf8');
fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ args, files }));
fs.writeFileSync(args[args.indexOf('--package') + 1], '');
`,
  );
  chmodSync(script, 0o755);
  return { path: script, record };
}

interface Packed {
  appDir: string;
  stage: string;
  deps: string[];
  fpm: { args: string[]; files: Record<string, string> };
  /** electron-builder's output (the before-pack hook's line is in it). */
  log: string;
}

/** Packs with electron-builder (dir + deb) into a temp folder. */
async function pack(electronDist: string, withFuses: boolean): Promise<Packed> {
  const { stage, deps } = stageProject();
  const out = tempDir('tbs-pack-');
  const fpm = standInFpm(tempDir('tbs-fpm-'));
  const cfg: BuilderConfig = { ...config, directories: { ...config.directories, output: out }, electronDist, linux: { ...config.linux, target: ['dir', 'deb'] } };
  if (!withFuses) delete cfg.electronFuses;
  const cfgFile = path.join(out, 'builder.json');
  writeFileSync(cfgFile, JSON.stringify(cfg));
  // The addon built here may have no TensorRT headers (no adapters): then the pack is a
  // simulator-only one on purpose, which the before-pack hook only allows when told.
  const hasAdapters = readdirSync(path.join(stage, path.dirname(ADDON))).some((f) => /^libtbs_trt\d+\.so$/.test(f));
  let log: string;
  try {
    const res = await run(process.execPath, [BUILDER, '--linux', '--projectDir', stage, '--config', cfgFile, '--publish', 'never'], {
      cwd: stage,
      // CI set on purpose: without --publish never, electron-builder would try to publish.
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', CI: '1', CUSTOM_FPM_PATH: fpm.path, ...(hasAdapters ? {} : { TBS_PACK_WITHOUT_TENSORRT: '1' }) },
      maxBuffer: 16 * 1024 * 1024,
    });
    log = `${res.stdout}${res.stderr}`;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`electron-builder failed: ${e.message}\n${(e.stdout ?? '').slice(-3000)}\n${(e.stderr ?? '').slice(-3000)}`, { cause: err });
  }
  return { appDir: path.join(out, 'linux-unpacked'), stage, deps, fpm: JSON.parse(readFileSync(fpm.record, 'utf8')) as Packed['fpm'], log };
}

/** Optional modules libraries probe for behind try/catch; none are needed by this app. */
const OPTIONAL: Record<string, string> = {};

function checkPackedApp({ appDir, stage, deps }: Packed): void {
  const resources = path.join(appDir, 'resources');
  const archive = path.join(resources, 'app.asar');
  expect(existsSync(path.join(appDir, config.linux.executableName))).toBe(true);
  const files = new Set(asar.listPackage(archive).map((f) => f.split(path.sep).join('/')));
  for (const f of ['/package.json', `/${pkg.main}`, '/dist/apps/main/preload.cjs', '/dist/apps/worker/worker.js']) expect(files, f).toContain(f);
  if (existsSync(path.join(stage, 'dist/renderer/index.html'))) expect(files).toContain('/dist/renderer/index.html');
  // The addon is a real file next to the archive, where dlopen can reach it and app-paths.ts looks.
  const unpackedAddon = path.join(resources, 'app.asar.unpacked', ADDON);
  expect(readFileSync(unpackedAddon).equals(readFileSync(path.join(stage, ADDON)))).toBe(true);
  // And so is everything the addon opens from its folder at run time (the TensorRT adapters),
  // enumerated by asking the packed addon itself.
  const runtimeFiles = addonRuntimeFiles(unpackedAddon);
  console.log(`[packaging] the packed addon opens at run time from its folder: ${runtimeFiles.join(', ') || '(nothing: built without TensorRT headers)'}`);
  for (const f of runtimeFiles) {
    const packed = path.join(path.dirname(unpackedAddon), f);
    expect(existsSync(packed), `${f} is not unpacked beside the addon`).toBe(true);
    expect(readFileSync(packed).equals(readFileSync(path.join(stage, path.dirname(ADDON), f)))).toBe(true);
    expect(files.has(`/${path.dirname(ADDON)}/${f}`), `${f} is in app.asar's listing`).toBe(true);
  }
  // Nothing that only serves development.
  const leaks = [...files].filter(
    (f) => /\.map$|\/test\/|\.test\.js$|^\/(apps|native|e2e|docs|packaging)\//.test(f) && !f.startsWith('/node_modules/') && f !== '/packaging/icon.png',
  );
  expect(leaks).toEqual([]);
  // The window icon (app-paths.ts iconPath) is inside the app.
  expect(files).toContain('/packaging/icon.png');
  // Everything main, the preload and the worker load at run time, followed through node_modules,
  // resolves inside the packed app: a file left out, a dependency electron-builder dropped, or a
  // devDependency used at run time fails here instead of on a user's machine.
  const extracted = tempDir('tbs-asar-');
  asar.extractAll(archive, extracted);
  // Every production dependency made it in, by name and version (electron-builder drops the ones
  // it cannot find, and may re-nest duplicates, so the place may differ). Type-only packages that
  // npm lists as peers of runtime ones (@types/react via zustand) are not needed at run time.
  const versionOf = (dir: string) => {
    const { name, version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
    return `${name}@${version}`;
  };
  const packedDeps = new Set(
    [...files]
      .filter((f) => /^\/node_modules\/.+\/package\.json$/.test(f) && /(^|\/)node_modules\/(@[^/]+\/)?[^/@]+\/package\.json$/.test(f))
      .map((f) => versionOf(path.join(extracted, path.dirname(f)))),
  );
  const needed = deps.map((d) => versionOf(path.join(stage, d))).filter((d) => !/^(@types\/|csstype@)/.test(d));
  expect(needed.length).toBeGreaterThan(20);
  expect(needed.filter((d) => !packedDeps.has(d))).toEqual([]);
  const graph = walkRequires(extracted, [pkg.main, 'dist/apps/main/preload.cjs', 'dist/apps/worker/worker.js'], {
    external: ['electron'],
    accept: (spec) => OPTIONAL[spec] ?? null,
  });
  expect(graph.unresolved).toEqual([]);
  // The walk did go through dependencies (zod everywhere; protobufjs behind the model reader).
  expect([...graph.files].some((f) => f.startsWith('node_modules/zod/'))).toBe(true);
  expect([...graph.files].some((f) => f.startsWith('node_modules/protobufjs/'))).toBe(true);
  const packedText = asar.extractFile(archive, 'package.json').toString();
  let packedPkg: { main?: string };
  try {
    packedPkg = JSON.parse(packedText) as { main: string };
  } catch {
    throw new Error(`packed package.json is not JSON (${packedText.length} bytes): ${JSON.stringify(packedText.slice(0, 200))}`);
  }
  expect(packedPkg.main).toBe(pkg.main);
}

function checkDeb({ fpm, appDir, log }: Packed): void {
  // The before-pack hook ran (and said what it packed).
  expect(log).toMatch(/\[before-pack\] packing (TensorRT adapters: libtbs_trt|WITHOUT TensorRT adapters)/);
  // Installing the deb links the GUI as /usr/bin/trt-build-studio-app, never as the CLI's name.
  const afterInstall = fpm.files['after-install'];
  expect(afterInstall).toContain(`'/usr/bin/${config.linux.executableName}'`);
  expect(afterInstall).not.toMatch(/\/usr\/bin\/trt-build-studio['\s]/);
  expect(afterInstall).toContain(`'/opt/TRT Build Studio/${config.linux.executableName}'`);
  // …and installs the AppArmor profile that lets the sandbox make its user namespace (Ubuntu 24.04).
  expect(afterInstall).toMatch(/APPARMOR_PROFILE_TARGET='\/etc\/apparmor\.d\/trt-build-studio-app'/);
  const profile = readFileSync(path.join(appDir, 'resources', 'apparmor-profile'), 'utf8');
  expect(profile).toContain(`profile "${config.linux.executableName}" "/opt/TRT Build Studio/${config.linux.executableName}"`);
  expect(profile).toMatch(/^\s*userns,$/m);
  // The MIME package: one type, its glob and description.
  const mime = fpm.files[`/usr/share/mime/packages/${config.linux.executableName}.xml`];
  expect(mime, `no MIME package in ${Object.keys(fpm.files).join(', ')}`).toBeDefined();
  expect(mime.match(/<mime-type /g)).toHaveLength(1);
  expect(mime).toContain('<mime-type type="application/x-onnx">');
  expect(mime).toContain('<glob pattern="*.onnx"/>');
  expect(mime).toContain('<comment>ONNX model</comment>');
  const arg = (flag: string) => fpm.args[fpm.args.indexOf(flag) + 1];
  expect(arg('-t')).toBe('deb');
  expect(arg('--name')).toBe('trt-build-studio');
  expect(arg('--url')).toBe(pkg.homepage);
  expect(arg('--maintainer')).toMatch(/<.+@.+>/);
  const depends = fpm.args.flatMap((a, i) => (a === '-d' ? [fpm.args[i + 1]] : []));
  expect(depends).toEqual(config.deb!.depends);
  // The icon, installed where the desktop looks for the executable's name.
  expect(fpm.args.some((a) => a.endsWith(`=/usr/share/icons/hicolor/512x512/apps/${config.linux.executableName}.png`))).toBe(true);
  // The .desktop entry: named by desktopName, StartupWMClass = the app id Electron gives the window
  // (desktopName without .desktop), opening files as URLs (%U, which argv.ts decodes).
  const desktopPath = `/usr/share/applications/${pkg.desktopName}`;
  const entry = fpm.files[desktopPath];
  expect(entry, `no ${desktopPath} in ${Object.keys(fpm.files).join(', ')}`).toBeDefined();
  const fields = Object.fromEntries(
    entry
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  expect(fields.StartupWMClass).toBe(pkg.desktopName!.replace(/\.desktop$/, ''));
  expect(fields.Name).toBe(pkg.productName);
  expect(fields.Icon).toBe(config.linux.executableName);
  expect(fields.Exec).toMatch(/ %U$/);
  expect(fields.MimeType).toBe('application/x-onnx;');
}

describe('packaging/before-pack.js: no TensorRT adapters, no package', () => {
  const hook = createRequire(import.meta.url)(path.join(ROOT, 'packaging', 'before-pack.js')) as ((ctx: unknown) => Promise<void>) & {
    checkAdapters(dir: string, env: Record<string, string | undefined>): { ok: boolean; adapters: string[]; message: string };
  };
  const project = (adapters: string[]) => {
    const dir = tempDir('tbs-before-pack-');
    mkdirSync(path.join(dir, 'build', 'native', 'Release'), { recursive: true });
    writeFileSync(path.join(dir, 'build', 'native', 'Release', 'trt_build_studio.node'), '');
    for (const a of adapters) writeFileSync(path.join(dir, 'build', 'native', 'Release', a), '');
    return dir;
  };

  it('refuses without an adapter, saying which headers TENSORRT_ROOT must name, unless TBS_PACK_WITHOUT_TENSORRT=1', async () => {
    const dir = project([]);
    const res = hook.checkAdapters(dir, {});
    expect(res.ok).toBe(false);
    expect(res.message.split('\n')[0]).toMatch(/^refusing to pack: no TensorRT adapter \(libtbs_trt<major>\.so\) in .*build\/native\/Release/);
    expect(res.message).toContain('TENSORRT_ROOT');
    expect(res.message).toMatch(/NvInfer\.h.*NvOnnxParser\.h/);
    expect(res.message).toContain('TBS_PACK_WITHOUT_TENSORRT=1');
    await expect(hook({ packager: { info: { projectDir: dir } } })).rejects.toThrow(/^refusing to pack/);
    expect(hook.checkAdapters(dir, { TBS_PACK_WITHOUT_TENSORRT: '1' })).toMatchObject({ ok: true, adapters: [] });
    // Only exactly "1" opts out.
    expect(hook.checkAdapters(dir, { TBS_PACK_WITHOUT_TENSORRT: 'yes' }).ok).toBe(false);
    expect(hook.checkAdapters(path.join(dir, 'missing'), {}).ok).toBe(false);
  });

  it('packs when the addon has its adapters, and names them', () => {
    const res = hook.checkAdapters(project(['libtbs_trt10.so', 'libtbs_trt11.so', 'libtbs_trt.so.bak']), {});
    expect(res).toMatchObject({ ok: true, adapters: ['libtbs_trt10.so', 'libtbs_trt11.so'] });
    expect(res.message).toBe('packing TensorRT adapters: libtbs_trt10.so, libtbs_trt11.so');
  });
});

const built = [path.join(ROOT, pkg.main), path.join(ROOT, 'dist/apps/main/preload.cjs'), path.join(ROOT, 'dist/apps/worker/worker.js'), packAddon];
const notBuilt = built.filter((p) => !existsSync(p));
if (notBuilt.length) console.log(`[skip] packaging with a stand-in Electron: not built yet: ${notBuilt.map((p) => path.relative(ROOT, p)).join(', ')}`);

describe.skipIf(notBuilt.length > 0)('electron-builder (dir + deb) with a stand-in Electron distribution', () => {
  it('packs the app with every run-time dependency, and a deb with its metadata, depends and .desktop entry', async () => {
    const fake = tempDir('tbs-fake-electron-');
    mkdirSync(path.join(fake, 'resources'));
    mkdirSync(path.join(fake, 'locales'));
    writeFileSync(path.join(fake, 'locales', 'en-US.pak'), '');
    writeFileSync(path.join(fake, 'electron'), '#!/bin/sh\necho "stand-in for the Electron binary"\n');
    chmodSync(path.join(fake, 'electron'), 0o755);
    const packed = await pack(fake, false);
    checkPackedApp(packed);
    checkDeb(packed);
  }, 180_000);
});

const electronDist = process.env.ELECTRON_DIST;
if (!electronDist) console.log('[skip] electron-builder with a real Electron: set ELECTRON_DIST to an unpacked Electron 45 folder to run it');

describe.skipIf(!electronDist || notBuilt.length > 0)('electron-builder (dir + deb) with the real Electron (ELECTRON_DIST)', () => {
  it('packs the app, fuses included', async () => {
    const packed = await pack(path.resolve(electronDist!), true);
    checkPackedApp(packed);
    checkDeb(packed);
  }, 300_000);
});
