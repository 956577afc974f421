// `build -o <path>` where the path is not a plain new file: a FIFO, a device node, a symbolic
// link, a folder others could replace the engine in. Real CLI, real worker, real file system.
// Nothing here is ever written to: every refusal is proven by stat(2) before and after.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const SIM = ['--backend', 'simulated', '--sim-duration', '0.2', '--sim-seed', '3'];

beforeAll(() => {
  dir = tempDir('tbs-cli-out-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The fields of stat(2) that change when a node is replaced or written. */
function identity(p: string) {
  const st = fs.lstatSync(p, { bigint: true });
  return { dev: st.dev, ino: st.ino, mode: st.mode, size: st.size, mtime: st.mtimeNs, ctime: st.ctimeNs, rdev: st.rdev };
}

describe('build -o <not a regular file>', () => {
  it('a FIFO: exit 2 before any build, the FIFO untouched (and nobody blocks on it)', async () => {
    const fifo = path.join(dir, 'engine.fifo');
    execFileSync('mkfifo', [fifo]);
    const before = identity(fifo);
    const r = await runCli(['build', model, '-o', fifo, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/engine\.fifo is a FIFO \(named pipe\), not a regular file; it is left untouched/);
    expect(identity(fifo)).toEqual(before);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // The same with --json: no events, a usage error.
    const j = await runCli(['build', model, '-o', fifo, ...SIM, '--json']);
    expect(j.code).toBe(2);
    expect(identity(fifo)).toEqual(before);
  });

  it('a character device (/dev/null): exit 2, the node untouched', async () => {
    // /dev/null is never at risk: the refusal comes from lstat before anything is opened for
    // writing, which the unchanged inode, mode, size and times show.
    const before = identity('/dev/null');
    const r = await runCli(['build', model, '-o', '/dev/null', ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\/dev\/null is a character device, not a regular file; it is left untouched/);
    expect(identity('/dev/null')).toEqual(before);
    expect(fs.lstatSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('a directory: exit 2', async () => {
    const r = await runCli(['build', model, '-o', dir, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/output path is a directory/);
  });
});

describe('build -o <symbolic link>', () => {
  it('writes through the link to its target; the link stays a link', async () => {
    const targets = path.join(dir, 'targets');
    fs.mkdirSync(targets, { mode: 0o700 });
    const target = path.join(targets, 'real.engine');
    fs.writeFileSync(target, 'old engine');
    const link = path.join(dir, 'link.engine');
    fs.symlinkSync(target, link);
    const r = await runCli(['build', model, '-o', link, ...SIM, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(parseNdjson(r.stdout).at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(link)).toBe(target);
    expect(fs.readFileSync(target, 'latin1')).toMatch(/^TRT-BUILD-STUDIO SIMULATED ENGINE/);
    expect(fs.readdirSync(targets)).toEqual(['real.engine']); // the temp file went here, and is gone
  });

  it('refuses a link to nothing, or to a FIFO, and leaves the link as it is', async () => {
    const dangling = path.join(dir, 'dangling.engine');
    fs.symlinkSync(path.join(dir, 'nowhere', 'x.engine'), dangling);
    const r = await runCli(['build', model, '-o', dangling, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/dangling\.engine is a symbolic link to a missing file/);
    expect(fs.lstatSync(dangling).isSymbolicLink()).toBe(true);

    const fifo = path.join(dir, 'behind-link.fifo');
    execFileSync('mkfifo', [fifo]);
    const toFifo = path.join(dir, 'to-fifo.engine');
    fs.symlinkSync(fifo, toFifo);
    const before = identity(fifo);
    const f = await runCli(['build', model, '-o', toFifo, ...SIM]);
    expect(f.code).toBe(2);
    expect(f.stderr).toMatch(/the target of the symbolic link .*to-fifo\.engine\) is a FIFO/);
    expect(fs.lstatSync(toFifo).isSymbolicLink()).toBe(true);
    expect(identity(fifo)).toEqual(before);
  });

  it('refuses a link whose target is the model', async () => {
    const link = path.join(dir, 'model-link.engine');
    fs.symlinkSync(model, link);
    const before = fs.readFileSync(model);
    const r = await runCli(['build', model, '-o', link, ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/would overwrite the model/);
    expect(fs.readFileSync(model).equals(before)).toBe(true);
  });
});

describe('build -o <file in a folder others control>', () => {
  it('refuses a folder writable by every user without the sticky bit, accepts it with the bit', async () => {
    const open = path.join(dir, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    const r = await runCli(['build', model, '-o', path.join(open, 'x.engine'), ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is writable by every user \(mode 0777\) without the sticky bit.*chmod o-w/);
    expect(fs.readdirSync(open)).toEqual([]);
    fs.chmodSync(open, 0o1777);
    const ok = await runCli(['build', model, '-o', path.join(open, 'x.engine'), ...SIM]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it.runIf(process.geteuid?.() === 0)('refuses a folder owned by another user (needs root to chown)', async () => {
    const theirs = path.join(dir, 'theirs');
    fs.mkdirSync(theirs, { mode: 0o755 });
    fs.chownSync(theirs, 65534, 65534);
    const r = await runCli(['build', model, '-o', path.join(theirs, 'x.engine'), ...SIM]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/belongs to another user \(uid 65534\)/);
    expect(fs.readdirSync(theirs)).toEqual([]);
  });
});

describe('errors never quote files', () => {
  it('a text file given as a timing cache: exit 2, the message names it a text file and holds none of its bytes', async () => {
    const secret = 'root:$6$Zq9salt$hashhashhash:19000:0:99999:7:::\nsvc-account:$6$pepper$otherhash:19000:0:99999:7:::\n';
    const cache = path.join(dir, 'shadow-copy');
    fs.writeFileSync(cache, secret);
    for (const json of [false, true]) {
      const r = await runCli(['build', model, '-o', path.join(dir, 'c.engine'), ...SIM, '--timing-cache', cache, ...(json ? ['--json'] : [])]);
      expect(r.code).toBe(2);
      const said = r.stdout + r.stderr;
      expect(said).toMatch(/shadow-copy is not a timing cache: it looks like a text file/);
      for (const piece of secret.split(/[:\n*$]+/).filter((t) => t.length >= 3)) expect(said).not.toContain(piece);
    }
    expect(fs.readFileSync(cache, 'utf8')).toBe(secret);
  });
});
