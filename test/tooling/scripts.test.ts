// The project's own scripts as a new user meets them: `npm test` (scripts/run-suites.js) and
// `npm run app` (scripts/app.js).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const require_ = createRequire(__filename);
const { SUITES, runSuites } = require_(path.join(ROOT, 'scripts/run-suites.js')) as {
  SUITES: string[];
  runSuites(wanted: string[], exec: (s: string) => { status: number | null; signal: NodeJS.Signals | null }): number;
};
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-scripts-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('npm test (scripts/run-suites.js)', () => {
  it('is what npm test runs, and every suite it names is a script of its own', () => {
    expect(pkg.scripts.test).toBe('node scripts/run-suites.js');
    for (const s of SUITES) expect(pkg.scripts[s], s).toBeDefined();
    // No suite chains another: each one is reported on its own.
    for (const s of SUITES) expect(pkg.scripts[s], s).not.toMatch(/npm run test:/);
  });

  it('runs every suite even after one fails, reports each, and fails at the end', () => {
    const ran: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const code = runSuites([], (s) => {
        ran.push(s);
        return { status: s === 'test:native' ? 1 : 0, signal: null };
      });
      expect(code).toBe(1);
      expect(ran).toEqual(['build', ...SUITES]);
      const out = log.mock.calls.map((c) => String(c[0])).join('\n');
      expect(out).toContain(`suites: ${SUITES.length - 1} passed, 1 failed`);
      expect(out).toMatch(/✗ test:native .*\(exit code 1\)/);
    } finally {
      log.mockRestore();
    }
  });

  it('runs no suite when the build fails, and refuses an unknown suite name', () => {
    const ran: string[] = [];
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(runSuites([], (s) => (ran.push(s), { status: s === 'build' ? 2 : 0, signal: null }))).toBe(1);
      expect(ran).toEqual(['build']);
      expect(runSuites(['test:nope'], () => ({ status: 0, signal: null }))).toBe(2);
      expect(err.mock.calls.map((c) => String(c[0])).join('\n')).toContain('unknown suite(s): test:nope');
    } finally {
      err.mockRestore();
      log.mockRestore();
    }
  });
});

describe('npm run app (scripts/app.js)', () => {
  const app = (env: Record<string, string>) =>
    spawnSync(process.execPath, [path.join(ROOT, 'scripts/app.js'), 'model.onnx'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 });
  const built = fs.existsSync(path.join(ROOT, 'dist/apps/main/main.js'));

  it.skipIf(!built)('starts the Electron it is pointed at with this checkout and the given arguments', () => {
    const dist = path.join(scratch, 'electron-dist');
    fs.mkdirSync(dist);
    const argsFile = path.join(scratch, 'args');
    fs.writeFileSync(path.join(dist, 'electron'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexit 3\n`, { mode: 0o755 });
    const r = app({ ELECTRON_OVERRIDE_DIST_PATH: dist });
    expect(r.status).toBe(3);
    expect(fs.readFileSync(argsFile, 'utf8').trim().split('\n')).toEqual([ROOT, 'model.onnx']);
  });

  it('says in words what to do when the folder it is pointed at has no Electron', () => {
    const r = app({ ELECTRON_OVERRIDE_DIST_PATH: path.join(scratch, 'nothing-here') });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/has no "electron" in it|not built yet/);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  const [major, minor] = process.versions.node.split('.').map(Number);
  const oldNode = major < 22 || (major === 22 && minor < 12);
  const fetched = fs.existsSync(path.join(ROOT, 'node_modules/electron/path.txt'));
  it.skipIf(!built || !oldNode || fetched)('on Node < 22.12 without a downloaded binary: a clear paragraph, no stack trace', () => {
    const r = app({ ELECTRON_OVERRIDE_DIST_PATH: '' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('needs Node >= 22.12');
    expect(r.stderr).toContain('ELECTRON_OVERRIDE_DIST_PATH=');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
