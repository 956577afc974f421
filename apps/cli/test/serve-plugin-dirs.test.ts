// `serve --plugin-dir` (issue 34 item 3): a client of the HTTP service names plugin libraries
// only from inside the operator's folders. The real serve (bin → dist) and real workers running
// the simulated backend, whose plugin handling stands for TensorRT's dlopen: it logs each library
// it "loads" and the manifest records each one's sha256. A refused library gets a 400 before any
// build exists, so nothing loads it and nothing hashes it.
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { BIN, killLeftoverServers, REPO, startServe, type ServeProcess } from '../../service/http/test/serve-process.js';
import { takePluginDirs, uploadFolders } from '../commands/serve.js';

const SIM = { backend: 'simulated', simDuration: 0.3, simSeed: 5 };

let dir: string;
let trusted: string;
let lib: string;
let outsideLib: string;
let custom: string;
let out: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = fs.realpathSync(tempDir('tbs-serve-plugins-'));
  trusted = path.join(dir, 'plugins');
  fs.mkdirSync(trusted);
  lib = path.join(trusted, 'libmy_plugin.so');
  fs.writeFileSync(lib, 'stand-in plugin library');
  outsideLib = path.join(dir, 'libevil.so');
  fs.writeFileSync(outsideLib, 'not the operator’s');
  fs.symlinkSync(outsideLib, path.join(trusted, 'libsneaky.so'));
  out = path.join(dir, 'engines');
  fs.mkdirSync(out);
  // An op of a custom domain: the simulated build succeeds only with a plugin library loaded.
  custom = writeModel(path.join(dir, 'custom.onnx'), { layers: 1, extraNodes: [{ op: 'MyCustomOp', inputs: ['probs'], outputs: ['custom_out'], domain: 'com.example' }] });
  serve = await startServe(['--plugin-dir', trusted, '--output-dir', out]);
});

afterAll(async () => {
  await serve?.stop();
  killLeftoverServers();
  fs.rmSync(dir, { recursive: true, force: true });
});

function api(s: ServeProcess, p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${s.base}${p}`, { ...init, headers: { Authorization: `Bearer ${s.token}`, ...(init.headers as Record<string, string>) } });
}

const post = (s: ServeProcess, options: Record<string, unknown>) =>
  api(s, '/api/builds', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ modelPath: custom, options: { ...SIM, ...options } }) });

/** Every manifest under the engines folder, as text (a hash of a refused file must be in none). */
function manifests(): string {
  return fs
    .readdirSync(out)
    .filter((f) => f.endsWith('.manifest.json'))
    .map((f) => fs.readFileSync(path.join(out, f), 'utf8'))
    .join('\n');
}

const sha256 = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

describe('serve --plugin-dir', () => {
  it('answers 400 for a library outside the folders, a symlink out of them and dir/../x, naming the option and the folders; nothing loads', async () => {
    const before = (await (await api(serve, '/api/builds')).json()) as unknown[];
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ staticPlugins: [outsideLib] }, /^staticPlugins\[0\]: .*libevil\.so is not inside a plugin folder of this service \(allowed: .*plugins\)/],
      [{ dynamicPlugins: [path.join(trusted, 'libsneaky.so')] }, /^dynamicPlugins\[0\]: .*libsneaky\.so resolves to .*libevil\.so, outside the plugin folders/],
      [{ pluginsToSerialize: [`${trusted}/../libevil.so`] }, /^pluginsToSerialize\[0\]: .*libevil\.so is not inside a plugin folder/],
      [{ staticPlugins: ['/etc/shadow'] }, /^staticPlugins\[0\]: \/etc\/shadow is not inside a plugin folder/],
    ];
    for (const [options, message] of cases) {
      const res = await post(serve, options);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe('bad_input');
      expect(body.error.message).toMatch(message);
    }
    // No build was made, so no worker ran and no manifest names (or hashes) the refused file.
    expect(((await (await api(serve, '/api/builds')).json()) as unknown[]).length).toBe(before.length);
    const m = manifests();
    expect(m).not.toContain(sha256(outsideLib));
    expect(m).not.toContain('libevil');
  });

  it('accepts a library inside: the build loads it and its manifest records it', async () => {
    const res = await post(serve, { staticPlugins: [lib] });
    const body = (await res.json()) as { id: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    let rec: { state: string; outputPath?: string } = { state: 'queued' };
    for (const end = Date.now() + 60_000; !['succeeded', 'failed', 'cancelled', 'crashed'].includes(rec.state) && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 100));
      rec = (await (await api(serve, `/api/builds/${body.id}`)).json()) as typeof rec;
    }
    expect(rec.state).toBe('succeeded');
    const manifest = JSON.parse(fs.readFileSync(`${rec.outputPath}.manifest.json`, 'utf8')) as { pluginLibraries: Array<{ path: string; sha256: string }> };
    expect(manifest.pluginLibraries).toEqual([{ path: lib, sha256: sha256(lib) }]);
  });

  it('refuses to write an engine or a timing cache into a plugin folder (it could then be named as a library)', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ outputPath: path.join(trusted, 'libplanted.so') }, /^output path .*libplanted\.so is inside the plugin folder/],
      [{ options: { ...SIM, timingCache: path.join(trusted, 'libcache.so') } }, /^timingCache .*libcache\.so is inside the plugin folder/],
    ];
    for (const [body, message] of cases) {
      const res = await api(serve, '/api/builds', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ modelPath: custom, options: SIM, ...body }),
      });
      const answer = (await res.json()) as { error: { message: string } };
      expect(res.status, JSON.stringify(answer)).toBe(400);
      expect(answer.error.message).toMatch(message);
    }
    expect(fs.readdirSync(trusted).sort()).toEqual(['libmy_plugin.so', 'libsneaky.so']);
  });

  it('without --plugin-dir every plugin library is refused, saying how to allow some', async () => {
    const bare = await startServe([]);
    try {
      const res = await post(bare, { dynamicPlugins: [lib] });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
        'dynamicPlugins[0]: this service loads no plugin libraries: start it with --plugin-dir <folder>',
      );
    } finally {
      await bare.stop();
    }
  });

  it('refuses to start with a folder that does not exist, or one holding the upload folders', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
    const missing = run('--plugin-dir', path.join(dir, 'nope'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`trt-build-studio serve: --plugin-dir ${path.join(dir, 'nope')}: no such folder`);
    // serve's upload folders are made in the temp folder: trusting it would load uploaded files.
    const tmp = run('--plugin-dir', os.tmpdir());
    expect(tmp.status).toBe(2);
    expect(tmp.stderr).toMatch(/--plugin-dir .*: overlaps serve's upload folders .*where clients can write files/);
  });
});

describe("serve's command line: --plugin-dir taken out before the HTTP layer parses the rest", () => {
  it('takes both spellings, repeated, and never a value of another flag', () => {
    expect(takePluginDirs(['--port', '0', '--plugin-dir', '/a', '--plugin-dir=/b', '--host', '127.0.0.1'])).toEqual({
      rest: ['--port', '0', '--host', '127.0.0.1'],
      dirs: ['/a', '/b'],
    });
    // A token that happens to read "--plugin-dir" stays the token's (serve then refuses it as a token).
    expect(takePluginDirs(['--token', '--plugin-dir', '/etc'])).toEqual({ rest: ['--token', '--plugin-dir', '/etc'], dirs: [] });
    expect(takePluginDirs(['--help', '--plugin-dir', '/a'])).toEqual({ rest: ['--help'], dirs: ['/a'] });
    expect(() => takePluginDirs(['--plugin-dir'])).toThrow('--plugin-dir needs a folder');
    expect(() => takePluginDirs(['--plugin-dir='])).toThrow('--plugin-dir needs a folder');
  });

  it("names the upload folders a plugin folder may not overlap: the temp folder's tbs-uploads-*, or a farm's <artifacts>/uploads", () => {
    expect(uploadFolders(['--port', '0'])).toEqual([{ dir: os.tmpdir(), what: "serve's upload folders", pattern: /^tbs-uploads-/ }]);
    expect(uploadFolders(['--queue', 'redis://x', '--artifacts', '/shared/art'])).toEqual([{ dir: '/shared/art/uploads', what: "the farm's upload folder" }]);
    expect(uploadFolders(['--artifacts=/shared/art'])).toEqual([{ dir: '/shared/art/uploads', what: "the farm's upload folder" }]);
  });
});
