import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRegistryDir, findStudios, notOurs, probeSocketPath, publishStudio, registryDir } from '../studio-registry.js';

const dirs: string[] = [];
function runtimeDir(): NodeJS.ProcessEnv {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-xdg-'));
  dirs.push(d);
  return { XDG_RUNTIME_DIR: d };
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const entry = (probeSocket: string) => ({ url: 'http://127.0.0.1:8177', token: 'secret', probeSocket, kind: 'serve' as const });

describe('studio registry', () => {
  it('publishes atomically into a 0700 folder as a 0600 file, finds it, and removes it', () => {
    const env = runtimeDir();
    const dir = registryDir(env);
    expect(dir).toBe(path.join(env.XDG_RUNTIME_DIR!, 'trt-build-studio'));
    const p = publishStudio(entry(probeSocketPath(dir)), env);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(p.file).mode & 0o777).toBe(0o600);
    expect(path.basename(p.file)).toBe(`studio-${process.pid}.json`);
    expect(fs.readdirSync(dir)).toEqual([path.basename(p.file)]); // no temp file left
    const found = findStudios(env);
    expect(found.refused).toEqual([]);
    expect(found.studios).toEqual([{ v: 1, pid: process.pid, ...entry(probeSocketPath(dir)) }]);
    p.remove();
    expect(fs.existsSync(p.file)).toBe(false);
    expect(findStudios(env).studios).toEqual([]);
  });

  it('without XDG_RUNTIME_DIR: /tmp/trt-build-studio-<uid>', () => {
    expect(registryDir({})).toBe(`/tmp/trt-build-studio-${process.getuid!()}`);
  });

  it('skips a studio whose process is gone, and a missing folder is no studio', () => {
    const env = runtimeDir();
    expect(findStudios(env)).toEqual({ studios: [], refused: [] });
    const dir = ensureRegistryDir(env);
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(gone.stdout);
    fs.writeFileSync(path.join(dir, `studio-${pid}.json`), JSON.stringify({ v: 1, pid, ...entry('/nowhere.sock') }), { mode: 0o600 });
    expect(findStudios(env).studios).toEqual([]);
  });

  it('refuses a folder or file open to others, and a symbolic link, saying why', () => {
    const env = runtimeDir();
    const dir = ensureRegistryDir(env);
    const file = path.join(dir, `studio-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ v: 1, pid: process.pid, ...entry('/x.sock') }), { mode: 0o600 });
    fs.chmodSync(file, 0o644);
    let f = findStudios(env);
    expect(f.studios).toEqual([]);
    expect(f.refused).toEqual([`${file} is open to other users (mode 644); refused (run chmod 600 ${file})`]);
    fs.chmodSync(file, 0o600);
    fs.chmodSync(dir, 0o755);
    f = findStudios(env);
    expect(f.studios).toEqual([]);
    expect(f.refused[0]).toContain('is open to other users (mode 755)');
    expect(() => publishStudio(entry('/x.sock'), env)).toThrow(/studio registry: .* is open to other users \(mode 755\)/);
    fs.chmodSync(dir, 0o700);
    expect(findStudios(env).studios).toHaveLength(1);
    // A link planted in place of the folder is refused, not followed.
    const env2 = runtimeDir();
    fs.symlinkSync(dir, registryDir(env2));
    expect(findStudios(env2).refused[0]).toContain('is a symbolic link');
  });

  it("refuses a folder or file another user owns (root's, checked as a studio registry would)", () => {
    if (process.getuid!() === 0) return; // root owns everything here: nothing to refuse
    expect(notOurs('/usr', 'folder')).toBe('/usr belongs to another user (uid 0); refused (remove it, it is created again, private)');
    expect(notOurs('/etc/passwd', 'file')).toBe('/etc/passwd belongs to another user (uid 0); refused (remove it, it is created again, private)');
    // The registry folder itself: XDG_RUNTIME_DIR=/ names /trt-build-studio, which we cannot make.
    expect(() => ensureRegistryDir({ XDG_RUNTIME_DIR: '/' })).toThrow();
  });
});
