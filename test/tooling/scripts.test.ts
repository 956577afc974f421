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
type Exit = { status: number | null; signal: NodeJS.Signals | null };
const { SUITES, ALONGSIDE, runSuites } = require_(path.join(ROOT, 'scripts/run-suites.js')) as {
  SUITES: string[];
  ALONGSIDE: Record<string, string>;
  runSuites(wanted: string[], exec: (s: string, held: boolean) => Exit | Promise<Exit>): Promise<number>;
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

  it('runs every suite even after one fails, reports each, and fails at the end', async () => {
    const ran: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const code = await runSuites([], (s) => {
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

  it('runs no suite when the build fails, and refuses an unknown suite name', async () => {
    const ran: string[] = [];
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await runSuites([], (s) => (ran.push(s), { status: s === 'build' ? 2 : 0, signal: null }))).toBe(1);
      expect(ran).toEqual(['build']);
      expect(await runSuites(['test:nope'], () => ({ status: 0, signal: null }))).toBe(2);
      expect(err.mock.calls.map((c) => String(c[0])).join('\n')).toContain('unknown suite(s): test:nope');
    } finally {
      err.mockRestore();
      log.mockRestore();
    }
  });
});

describe('npm test: suites run alongside another', () => {
  it('lint runs while the memory tests run, its output held back; both are reported; alone it runs alone', async () => {
    expect(ALONGSIDE).toEqual({ 'test:memory': 'lint' });
    const events: string[] = [];
    const held: Record<string, boolean> = {};
    const finish: Record<string, (e: Exit) => void> = {};
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const done = runSuites(['test:memory', 'lint', 'test:e2e'], (s, h) => {
        events.push(`start ${s}`);
        held[s] = h;
        if (s === 'build') return { status: 0, signal: null };
        return new Promise<Exit>((resolve) => (finish[s] = (e) => (events.push(`end ${s}`), resolve(e))));
      });
      await vi.waitFor(() => expect(Object.keys(finish).sort()).toEqual(['lint', 'test:memory']));
      // Both started before either ended; test:e2e waits for both.
      expect(events).toEqual(['start build', 'start test:memory', 'start lint']);
      expect(held).toEqual({ build: false, 'test:memory': false, lint: true });
      finish.lint({ status: 1, signal: null });
      finish['test:memory']({ status: 0, signal: null });
      await vi.waitFor(() => expect(finish['test:e2e']).toBeDefined());
      finish['test:e2e']({ status: 0, signal: null });
      expect(await done).toBe(1);
      const out = log.mock.calls.map((c) => String(c[0])).join('\n');
      expect(out).toMatch(/✗ lint .*\(exit code 1\)/);
      expect(out).toContain('suites: 2 passed, 1 failed');

      events.length = 0;
      expect(await runSuites(['lint'], (s) => (events.push(s), { status: 0, signal: null }))).toBe(0);
      expect(events).toEqual(['build', 'lint']);
    } finally {
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
