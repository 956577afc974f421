// scripts/app.js (npm run app) on systems that restrict unprivileged user namespaces (Ubuntu
// 24.04). No Electron binary runs here, so the checks are tested as functions with the file
// system faked, and Chromium's abort is recognised from its own words. Never --no-sandbox.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../../..');
const script = createRequire(import.meta.url)(path.join(ROOT, 'scripts', 'app.js')) as {
  sandboxProblem(binary: string, o: { platform?: string; fsApi?: unknown }): string[] | null;
  isSandboxFailure(stderr: string): boolean;
  sandboxFailureMessage(binary: string): string[];
  USERNS_RESTRICTION: string;
};

const BIN = '/home/u/trt-build-studio/node_modules/electron/dist/electron';
const HELPER = '/home/u/trt-build-studio/node_modules/electron/dist/chrome-sandbox';

function fakeFs(restrict: string | null, helper: { uid: number; mode: number } | null) {
  return {
    readFileSync(p: string) {
      if (p === script.USERNS_RESTRICTION && restrict !== null) return `${restrict}\n`;
      throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    },
    statSync(p: string) {
      if (p === HELPER && helper) return helper;
      throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    },
  };
}

describe('npm run app and the sandbox on Ubuntu 24.04', () => {
  it('starts where user namespaces are not restricted, or where chrome-sandbox is root-owned 4755', () => {
    expect(script.sandboxProblem(BIN, { platform: 'linux', fsApi: fakeFs('0', null) })).toBeNull();
    expect(script.sandboxProblem(BIN, { platform: 'linux', fsApi: fakeFs(null, null) })).toBeNull();
    expect(script.sandboxProblem(BIN, { platform: 'linux', fsApi: fakeFs('1', { uid: 0, mode: 0o104755 }) })).toBeNull();
    expect(script.sandboxProblem(BIN, { platform: 'darwin', fsApi: fakeFs('1', null) })).toBeNull();
  });

  it('stops before launching, saying why and the one command, when the restriction is on and the helper is not set up', () => {
    const lines = script.sandboxProblem(BIN, { platform: 'linux', fsApi: fakeFs('1', { uid: 1000, mode: 0o100755 }) })!;
    expect(lines[0]).toMatch(/^Cannot start the app: this system restricts unprivileged user namespaces \(\/proc\/sys\/kernel\/apparmor_restrict_unprivileged_userns = 1/);
    const text = lines.join('\n');
    expect(text).toContain(`not owned by root with mode 4755 (it is uid 1000, mode 755)`);
    expect(text).toContain(`  sudo chown root:root ${HELPER} && sudo chmod 4755 ${HELPER}`);
    expect(lines.filter((l) => l.startsWith('  ')).join('\n')).not.toContain('--no-sandbox');
    const missing = script.sandboxProblem(BIN, { platform: 'linux', fsApi: fakeFs('1', null) })!.join('\n');
    expect(missing).toContain(`there is no SUID sandbox helper at ${HELPER}`);
  });

  it("quotes paths with spaces in the command (the unpacked app's folder may have one)", () => {
    const bin = '/home/u/My Apps/linux-unpacked/trt-build-studio-app';
    expect(script.sandboxFailureMessage(bin).join('\n')).toContain(
      "sudo chown root:root '/home/u/My Apps/linux-unpacked/chrome-sandbox' && sudo chmod 4755 '/home/u/My Apps/linux-unpacked/chrome-sandbox'",
    );
  });

  it("recognises Chromium's sandbox abort after a launch, and nothing else", () => {
    expect(
      script.isSandboxFailure(
        "[12:34:56.789:FATAL:setuid_sandbox_host.cc(163)] The SUID sandbox helper binary was found, but is not configured correctly. Rather than run without sandboxing I'm aborting now.",
      ),
    ).toBe(true);
    expect(
      script.isSandboxFailure(
        '[1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! If you are running on Ubuntu 23.10+ or another Linux distro that has disabled unprivileged user namespaces with AppArmor, see …',
      ),
    ).toBe(true);
    expect(script.isSandboxFailure('libgbm.so.1: cannot open shared object file')).toBe(false);
  });

  it('never passes --no-sandbox to Electron', () => {
    const src = readFileSync(path.join(ROOT, 'scripts', 'app.js'), 'utf8');
    const code = src
      .split('\n')
      .filter((l) => !/^\s*(\/\/|')/.test(l) && !/^\s*`/.test(l))
      .join('\n');
    expect(code).not.toMatch(/['"`]--no-sandbox['"`]/);
  });
});

const restrictedHere = (() => {
  try {
    return readFileSync('/proc/sys/kernel/apparmor_restrict_unprivileged_userns', 'utf8').trim() === '1';
  } catch {
    return false;
  }
})();
const built = existsSync(path.join(ROOT, 'dist', 'apps', 'main', 'main.js'));

describe.skipIf(restrictedHere || !built || process.platform !== 'linux')('npm run app, with a stand-in Electron', () => {
  const launch = (body: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tbs-app-script-'));
    try {
      writeFileSync(path.join(dir, 'electron'), `#!/bin/sh\n${body}\n`);
      chmodSync(path.join(dir, 'electron'), 0o755);
      return spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'app.js'), 'm.onnx'], {
        env: { ...process.env, ELECTRON_OVERRIDE_DIST_PATH: dir },
        encoding: 'utf8',
        timeout: 20_000,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('after a launch that dies of the sandbox at once, says why and what to run', () => {
    const r = launch(`echo "[1:1:FATAL:zygote_host_impl_linux.cc(128)] No usable sandbox! Update your kernel" >&2; exit 133`);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('No usable sandbox!'); // Chromium's own words pass through
    expect(r.stderr).toContain('The app stopped at launch: Chromium could not start its sandbox');
    expect(r.stderr).toMatch(/sudo chown root:root \S*chrome-sandbox && sudo chmod 4755 \S*chrome-sandbox/);
  });

  it("passes the app's arguments and exit status through otherwise, without --no-sandbox", () => {
    const r = launch('echo "args: $*"; exit 3');
    expect(r.status).toBe(3);
    expect(r.stdout).toBe(`args: ${ROOT} m.onnx\n`);
    expect(r.stderr).not.toContain('sandbox');
  });
});
