// The plugin-library policy (issue 34 item 3): a service loads only libraries inside its
// operator's --plugin-dir folders, resolved through symlinks and `..`; the CLI's own build any.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuildOptions } from '../../shared/protocol.js';
import { ServiceError } from '../api.js';
import { checkPluginLibraries, NO_PLUGINS, parsePluginDirs, refuseWriteIntoPluginDirs, type PluginPolicy } from '../plugin-libraries.js';
import { UsageError } from '../../shared/usage-error.js';

let root: string;
let trusted: string;
let lib: string;
let outsideLib: string;
beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-plugin-policy-')));
  trusted = path.join(root, 'plugins');
  fs.mkdirSync(path.join(trusted, 'sub'), { recursive: true });
  lib = path.join(trusted, 'libgood.so');
  fs.writeFileSync(lib, 'stand-in plugin library');
  fs.writeFileSync(path.join(trusted, 'sub', 'libnested.so'), 'nested');
  outsideLib = path.join(root, 'outside.so');
  fs.writeFileSync(outsideLib, 'not trusted');
  fs.symlinkSync(outsideLib, path.join(trusted, 'link-out.so'));
  fs.symlinkSync(lib, path.join(trusted, 'link-in.so'));
  fs.symlinkSync(root, path.join(trusted, 'dir-out'));
  fs.mkdirSync(path.join(trusted, 'a-folder.so'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function check(options: Partial<BuildOptions>, policy: PluginPolicy): BuildOptions {
  const o = { ...options } as BuildOptions;
  checkPluginLibraries(o, policy);
  return o;
}

function refusal(options: Partial<BuildOptions>, policy: PluginPolicy): ServiceError {
  try {
    check(options, policy);
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as ServiceError).code).toBe('bad_input');
    return e as ServiceError;
  }
  throw new Error('expected a refusal');
}

describe('checkPluginLibraries with the operator folders (dirs)', () => {
  const policy = () => parsePluginDirs([trusted]);

  it('accepts a regular file inside a folder, nested too, and keeps its real path', () => {
    expect(check({ staticPlugins: [lib], dynamicPlugins: [path.join(trusted, 'sub', 'libnested.so')] }, policy())).toMatchObject({
      staticPlugins: [lib],
      dynamicPlugins: [path.join(trusted, 'sub', 'libnested.so')],
    });
    // A link inside pointing inside: the real file is what loads and what the manifest names.
    expect(check({ pluginsToSerialize: [path.join(trusted, 'link-in.so')] }, policy()).pluginsToSerialize).toEqual([lib]);
  });

  it('refuses a file outside, naming the option, the path and the allowed folders, before looking at it', () => {
    const e = refusal({ staticPlugins: ['/etc/shadow'] }, policy());
    expect(e.message).toBe(`staticPlugins[0]: /etc/shadow is not inside a plugin folder of this service (allowed: ${trusted}); its operator names them with --plugin-dir`);
    // The same words for a file that exists and one that does not: nothing is learnt about files
    // outside the folders (the refusal comes before any stat, and long before any hashing).
    const gone = path.join(root, 'no-such-file.so');
    expect(refusal({ staticPlugins: [gone] }, policy()).message).toBe(e.message.replace('/etc/shadow', gone));
    expect(refusal({ staticPlugins: [outsideLib] }, policy()).message).toBe(e.message.replace('/etc/shadow', outsideLib));
  });

  it('refuses dir/../outside.so and the folder itself', () => {
    expect(refusal({ dynamicPlugins: [lib, `${trusted}/../outside.so`] }, policy()).message).toMatch(
      new RegExp(`^dynamicPlugins\\[1\\]: ${outsideLib.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not inside a plugin folder`),
    );
    expect(refusal({ staticPlugins: [trusted] }, policy()).message).toContain('is not inside a plugin folder');
  });

  it('refuses a symlink inside that points out, and a path through a linked folder', () => {
    const e = refusal({ pluginsToSerialize: [path.join(trusted, 'link-out.so')] }, policy());
    expect(e.message).toBe(
      `pluginsToSerialize[0]: ${path.join(trusted, 'link-out.so')} resolves to ${outsideLib}, outside the plugin folders of this service (allowed: ${trusted})`,
    );
    expect(refusal({ staticPlugins: [path.join(trusted, 'dir-out', 'outside.so')] }, policy()).message).toContain(`resolves to ${outsideLib}`);
  });

  it('refuses a folder and a missing file inside the trusted folder', () => {
    expect(refusal({ staticPlugins: [path.join(trusted, 'a-folder.so')] }, policy()).message).toBe(
      `staticPlugins: plugin library is not a file: ${path.join(trusted, 'a-folder.so')}`,
    );
    expect(refusal({ staticPlugins: [path.join(trusted, 'nope.so')] }, policy()).message).toBe(`staticPlugins: plugin library not found: ${path.join(trusted, 'nope.so')}`);
  });

  it('with no folders configured refuses every library and says how to allow some', () => {
    expect(refusal({ dynamicPlugins: [lib] }, NO_PLUGINS).message).toBe(
      `dynamicPlugins[0]: this service loads no plugin libraries: start it with --plugin-dir <folder> (asked for ${lib})`,
    );
    // No plugin options: nothing to refuse.
    expect(() => check({}, NO_PLUGINS)).not.toThrow();
  });

  it('a trusted folder named through a symlink is trusted by its real path', () => {
    const linkDir = path.join(root, 'plugins-link');
    fs.symlinkSync(trusted, linkDir);
    const p = parsePluginDirs([linkDir]);
    expect(p).toEqual({ kind: 'dirs', dirs: [trusted] });
    // A policy made by hand with the link (not through parsePluginDirs) works the same.
    expect(check({ staticPlugins: [path.join(linkDir, 'libgood.so')] }, { kind: 'dirs', dirs: [linkDir] }).staticPlugins).toEqual([lib]);
    // Folders are trusted by their real path from start-up: a client names files there.
    expect(check({ staticPlugins: [lib] }, p).staticPlugins).toEqual([lib]);
    expect(refusal({ staticPlugins: [path.join(linkDir, 'libgood.so')] }, p).message).toContain(`(allowed: ${trusted})`);
  });
});

describe('checkPluginLibraries for the operator (any)', () => {
  it('keeps any existing file, as given (absolute)', () => {
    expect(check({ staticPlugins: [outsideLib] }, { kind: 'any' }).staticPlugins).toEqual([outsideLib]);
    expect(check({ staticPlugins: [path.join(trusted, 'link-out.so')] }, { kind: 'any' }).staticPlugins).toEqual([path.join(trusted, 'link-out.so')]);
    expect(refusal({ staticPlugins: [path.join(root, 'nope.so')] }, { kind: 'any' }).message).toContain('plugin library not found');
  });
});

describe('parsePluginDirs (start-up)', () => {
  const usage = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      return (e as Error).message;
    }
    throw new Error('expected a UsageError');
  };

  it('refuses a folder that does not exist, a file, and the root folder', () => {
    expect(usage(() => parsePluginDirs([path.join(root, 'missing')]))).toBe(`--plugin-dir ${path.join(root, 'missing')}: no such folder`);
    expect(usage(() => parsePluginDirs([lib]))).toBe(`--plugin-dir ${lib}: not a folder`);
    expect(usage(() => parsePluginDirs(['/']))).toContain('the root folder would trust every file');
  });

  it('no folders: the policy that refuses every library', () => {
    expect(parsePluginDirs([])).toEqual(NO_PLUGINS);
  });

  it('refuses a folder equal to, inside or holding an upload folder', () => {
    const uploads = path.join(root, 'uploads');
    fs.mkdirSync(path.join(uploads, 'inner'), { recursive: true });
    const forbidden = [{ dir: uploads, what: 'the upload folder' }];
    for (const d of [uploads, path.join(uploads, 'inner'), root]) {
      expect(usage(() => parsePluginDirs([d], { forbidden }))).toMatch(/overlaps the upload folder .*where clients can write files/);
    }
    expect(parsePluginDirs([trusted], { forbidden })).toEqual({ kind: 'dirs', dirs: [trusted] });
  });

  it("with a pattern: serve's upload folders made under a base folder (and the base itself, or above it)", () => {
    const base = path.join(root, 'tmp');
    fs.mkdirSync(path.join(base, 'tbs-uploads-1-2-abcdef', 'x'), { recursive: true });
    fs.mkdirSync(path.join(base, 'plugins'));
    const forbidden = [{ dir: base, what: "serve's upload folders", pattern: /^tbs-uploads-/ }];
    for (const d of [base, root, path.join(base, 'tbs-uploads-1-2-abcdef'), path.join(base, 'tbs-uploads-1-2-abcdef', 'x')]) {
      expect(usage(() => parsePluginDirs([d], { forbidden }))).toContain("overlaps serve's upload folders");
    }
    expect(parsePluginDirs([path.join(base, 'plugins')], { forbidden })).toEqual({ kind: 'dirs', dirs: [path.join(base, 'plugins')] });
  });
});

describe('refuseWriteIntoPluginDirs (for outputs a build writes)', () => {
  it('refuses a target inside a plugin folder, new or existing, and through a link; allows it elsewhere and for any', () => {
    const p = parsePluginDirs([trusted]);
    for (const target of [path.join(trusted, 'new.so'), lib, path.join(trusted, 'sub', 'x.engine')]) {
      expect(() => refuseWriteIntoPluginDirs(p, target, 'output path')).toThrow(`output path ${target} is inside the plugin folder ${trusted}`);
    }
    const linkDir = path.join(root, 'into-plugins');
    fs.symlinkSync(trusted, linkDir);
    expect(() => refuseWriteIntoPluginDirs(p, path.join(linkDir, 'planted.so'), 'timingCache')).toThrow(/^timingCache .*planted\.so is inside the plugin folder/);
    expect(() => refuseWriteIntoPluginDirs(p, path.join(root, 'engine.engine'), 'output path')).not.toThrow();
    expect(() => refuseWriteIntoPluginDirs({ kind: 'any' }, path.join(trusted, 'x.so'), 'output path')).not.toThrow();
    expect(() => refuseWriteIntoPluginDirs(NO_PLUGINS, path.join(trusted, 'x.so'), 'output path')).not.toThrow();
  });
});
