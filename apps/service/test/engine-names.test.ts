// Default engine names and explicit output / timing-cache names against the file system's limit of
// 255 bytes per name, including what the native layer appends (temp files, cache sidecars).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BackendInfo } from '../../shared/protocol.js';
import { ATOMIC_TEMP_SUFFIX_MAX_BYTES, NAME_MAX_BYTES, TIMING_CACHE_SUFFIX_MAX_BYTES, utf8Length } from '../../shared/file-names.js';
import { ServiceError } from '../api.js';
import { defaultEnginePath, validateBuild } from '../build-validation.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-names-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sim: BackendInfo = { name: 'simulated', available: true, version: 'sim-1', emulates: '10.16.0' };
const EXT = '.sim.10.16.0.engine';
/** The longest temp name atomic_file.cc can make: the largest pid_t and uint64 counter. */
const LONGEST_TEMP = `.tmp-${2 ** 31 - 1}-${2n ** 64n - 1n}`;

/** The engine's name, its temp file's longest possible name, and whether the file system takes it. */
function creatable(file: string): boolean {
  try {
    fs.writeFileSync(`${file}${LONGEST_TEMP}`, '');
    fs.unlinkSync(`${file}${LONGEST_TEMP}`);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENAMETOOLONG') return false;
    throw e;
  }
}

describe('default engine names fit the file system with the temp suffix', () => {
  const out = path.join(dir, 'out');
  fs.mkdirSync(out, { recursive: true });

  it('the reserve is the longest temp suffix the native layer can add', () => {
    expect(utf8Length(LONGEST_TEMP)).toBe(ATOMIC_TEMP_SUFFIX_MAX_BYTES);
    // The file system's limit is what we assume it is: 255 bytes fit, 256 do not.
    expect(creatable(path.join(out, 'x'.repeat(NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES)))).toBe(true);
    expect(creatable(path.join(out, 'x'.repeat(NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES + 1)))).toBe(false);
  });

  it.each([
    ['245 ASCII characters', `${'a'.repeat(245)}.onnx`, 'a'],
    ['100 CJK characters', `${'模'.repeat(100)}.onnx`, '模'],
    ['80 emoji', `${'😀'.repeat(80)}.onnx`, '😀'],
    ['emoji with ZWJ and skin tones', `${'👨‍👩‍👧👍🏽'.repeat(12)}.onnx`, '👨‍👩‍👧'],
  ])('%s: shortened at a character boundary, hash-marked, extension kept', (_what, name, first) => {
    const p = defaultEnginePath(out, name, sim, 'b1-aa');
    const base = path.basename(p);
    expect(path.dirname(p)).toBe(out);
    expect(utf8Length(base)).toBeLessThanOrEqual(NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES);
    expect(base.startsWith(first)).toBe(true);
    expect(base).toMatch(new RegExp(`-[0-9a-f]{8}${EXT.replace(/\./g, '\\.')}$`));
    expect(Buffer.from(base, 'utf8').toString('utf8')).toBe(base);
    expect(base).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/); // no half surrogate pair
    expect(creatable(p)).toBe(true);
    // The same name always maps to the same file (a rebuild finds its engine's name again).
    expect(defaultEnginePath(out, name, sim, 'b2-bb')).toBe(p);
  });

  it('a stem exactly at the limit is kept whole; one byte more is shortened', () => {
    const room = NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES - EXT.length;
    const exact = defaultEnginePath(out, `${'e'.repeat(room)}.onnx`, sim, 'b1-aa');
    expect(path.basename(exact)).toBe(`${'e'.repeat(room)}${EXT}`);
    expect(creatable(exact)).toBe(true);
    const over = path.basename(defaultEnginePath(out, `${'e'.repeat(room + 1)}.onnx`, sim, 'b1-aa'));
    expect(over).toMatch(new RegExp(`^e{${room - 9}}-[0-9a-f]{8}\\.sim`));
    expect(utf8Length(over)).toBe(NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES);
  });

  it('two long names that differ only at the end get two files', () => {
    const common = 'model-'.repeat(40);
    const a = defaultEnginePath(out, `${common}v1.onnx`, sim, 'b1-aa');
    const b = defaultEnginePath(out, `${common}v2.onnx`, sim, 'b1-aa');
    expect(a).not.toBe(b);
    expect(path.basename(a).slice(0, 150)).toBe(path.basename(b).slice(0, 150));
  });

  it('the build-id variant for a taken name fits too, and a long GPU name cannot crowd the model out', () => {
    const name = `${'z'.repeat(250)}.onnx`;
    const taken = defaultEnginePath(out, name, sim, 'b9-123456', () => true);
    expect(path.basename(taken)).toMatch(/-[0-9a-f]{8}\.sim\.10\.16\.0-b9-123456\.engine$/);
    expect(creatable(taken)).toBe(true);
    const gpu: BackendInfo = { name: 'tensorrt', available: true, version: '10.16.1', gpu: { name: `NVIDIA ${'Ultra '.repeat(60)}`, computeCapability: '9.0', device: 0 } };
    const p = defaultEnginePath(out, name, gpu, 'b1-aa');
    expect(path.basename(p).startsWith('z'.repeat(100))).toBe(true);
    expect(creatable(p)).toBe(true);
  });
});

describe('explicit output and timing-cache names are checked before the build', () => {
  const model = writeModel(path.join(dir, 'm.onnx'), { layers: 2 });
  let asked = 0;
  const ctx = {
    id: 'b1-x',
    outputDir: path.join(dir, 'default-out'),
    backends: async () => {
      asked++; // listing backends starts a worker: a bad name must be refused before that
      return [sim];
    },
  };
  const maxOutput = NAME_MAX_BYTES - ATOMIC_TEMP_SUFFIX_MAX_BYTES;
  const maxCache = NAME_MAX_BYTES - TIMING_CACHE_SUFFIX_MAX_BYTES;

  async function refusal(extra: object): Promise<ServiceError> {
    const before = asked;
    const err = await validateBuild({ modelPath: model, ...extra }, ctx).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(asked).toBe(before);
    return err as ServiceError;
  }

  it('an output name that leaves no room for the temp file is bad_input naming the limit', async () => {
    const err = await refusal({ outputPath: path.join(dir, `${'o'.repeat(maxOutput + 1)}`) });
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(
      new RegExp(`output file name is too long: "o+" is ${maxOutput + 1} bytes of UTF-8, at most ${maxOutput} fit \\(file systems allow 255 bytes per name`),
    );
    expect(err.message).toContain('.tmp-<pid>-<n>');
    // 74 CJK characters are 222 bytes, though only 74 characters.
    expect((await refusal({ outputPath: path.join(dir, `${'模'.repeat(74)}`) })).message).toMatch(/is 222 bytes of UTF-8, at most 219 fit/);
  });

  it('an output name exactly at the limit is accepted and its temp file can be created', async () => {
    const out = path.join(dir, 'o'.repeat(maxOutput));
    const v = await validateBuild({ modelPath: model, outputPath: out }, ctx);
    expect(v.outputPath).toBe(out);
    expect(creatable(out)).toBe(true);
  });

  it('a timing-cache name needs room for its lock, sidecar and temp names', async () => {
    const err = await refusal({ options: { timingCache: path.join(dir, 'c'.repeat(maxCache + 1)) } });
    expect(err.code).toBe('bad_input');
    expect(err.message).toMatch(new RegExp(`timingCache file name is too long: "c+" is ${maxCache + 1} bytes of UTF-8, at most ${maxCache} fit`));
    expect(err.message).toContain('.pending-<pid>-<n>');
    const cache = path.join(dir, 'c'.repeat(maxCache));
    const v = await validateBuild({ modelPath: model, options: { timingCache: cache } }, ctx);
    expect(v.options.timingCache).toBe(cache);
    // The longest sidecar the native cache store can write: "<cache>.pending-<pid>-<n>.tmp-<pid>-<n>".
    const sidecar = `${cache}.pending-${2 ** 31 - 1}-${2n ** 64n - 1n}`;
    expect(utf8Length(path.basename(sidecar + LONGEST_TEMP))).toBe(NAME_MAX_BYTES);
    fs.writeFileSync(sidecar + LONGEST_TEMP, '');
    fs.unlinkSync(sidecar + LONGEST_TEMP);
  });
});
