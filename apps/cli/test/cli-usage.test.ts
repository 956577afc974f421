// The CLI's argument handling and model errors, through the real command in a child process.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/cli.js';
import { tempDir, writeBadFile, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let fixed: string;
let dynamic: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-usage-');
  fs.chmodSync(dir, 0o755);
  fixed = writeModel(path.join(dir, 'fixed.onnx'), { layers: 3 });
  dynamic = writeModel(path.join(dir, 'dyn.onnx'), { dynamic: true });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('usage errors exit 2 with a hint', () => {
  it.each([
    [['build', 'm.onnx', '-o', 'x', '--bogus'], /unknown option --bogus[\s\S]*build --help/],
    [['inspect', '--frobnicate', 'm.onnx'], /unknown option --frobnicate/],
    [['frob'], /unknown command "frob"/],
    [['build', 'm.onnx'], /needs an output file: -o/],
    [['build', '-o', 'x.engine'], /needs a model/],
    [['build', 'm.onnx', '-o', 'x', '--opt-level', '9'], /--opt-level expects a whole number from 0 to 5, got "9"/],
    [['build', 'm.onnx', '-o', 'x', '--shapes', 'x:1x3/2x3'], /--shapes: invalid shape "x:1x3\/2x3"/],
    [['build', 'm.onnx', '-o', 'x', '--shapes', 'x:1xAx3'], /not a list of positive integers/],
    [['build', 'm.onnx', '-o', 'x', '--backend', 'cuda'], /--backend/],
    [['build', 'm.onnx', '-o', 'x', '--sim-fault', 'explode'], /--sim-fault.*fail\|crash\|hang/],
    [['build', 'm.onnx', '-o', 'x', '--sim-duration=0'], /--sim-duration expects a positive number/],
    [['build', 'm.onnx', '-o', 'x', '--minShapes', 'x:1x3'], /--optShapes and --maxShapes missing/],
    [['build', 'm.onnx', '-o', 'x', '--optShapes', 'x:1xAx3'], /--optShapes: "1xAx3" for "x" is not whole numbers/],
    [['build', 'm.onnx', '-o', 'x', '--opt-level', '7'], /--opt-level expects a whole number from 0 to 5, got "7"/],
    [['trtexec', '--onnx=m.onnx', '--saveEngine=x', '--bogus'], /--bogus: not a trtexec build flag this command knows[\s\S]*trtexec --help/],
    // check takes build options alone, read by build's own parser (one meaning per flag).
    [['check', 'x.engine', 'other.engine'], /check takes one engine; unexpected: other.engine/],
    [['check', 'x.engine', '-o', 'y.engine', '--queue', 'redis://h'], /check takes build options, not -o\/--output, --queue/],
    [['check', 'x.engine', '--time-budget', '5'], /check takes build options, not --time-budget/],
    [['check', 'x.engine', '--opt-level', '9'], /--opt-level expects a whole number from 0 to 5, got "9"/],
  ])('%j', async (args, msg) => {
    const r = await runCli(args);
    expect(r.stderr).toMatch(msg);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });
});

describe('help and version', () => {
  it('prints help for every command and the version', async () => {
    for (const cmd of ['build', 'inspect', 'backends', 'trtexec']) {
      const r = await runCli([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`trt-build-studio ${cmd}`);
    }
    const top = await runCli(['--help']);
    expect(top.stdout).toMatch(/build[\s\S]*inspect[\s\S]*backends[\s\S]*serve[\s\S]*mcp/);
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8'));
    expect((await runCli(['--version'])).stdout.trim()).toBe(`trt-build-studio ${pkg.version}`);
  });
});

describe('backends', () => {
  it('lists both backends with availability, as text and as JSON', async () => {
    const json = await runCli(['backends', '--json']);
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as Array<{ name: string; available: boolean; reason?: string }>;
    expect(list.map((b) => b.name).sort()).toEqual(['simulated', 'tensorrt']);
    const text = await runCli(['backends']);
    expect(text.code).toBe(0);
    for (const b of list) {
      expect(text.stdout).toMatch(new RegExp(`^${b.name}\\s+${b.available ? 'available' : 'unavailable: .+'}`, 'm'));
    }
    // The simulator says which TensorRT version's options it takes (TBS_SIM_TRT_VERSION).
    const v11 = await runCli(['backends', '--json'], { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } });
    expect((JSON.parse(v11.stdout) as Array<{ name: string; emulates?: string }>).find((b) => b.name === 'simulated')?.emulates).toBe('11.1.0');
    const t11 = await runCli(['backends'], { env: { ...process.env, TBS_SIM_TRT_VERSION: '11.1.0' } });
    expect(t11.stdout).toMatch(/^ +imitates TensorRT 11\.1\.0/m);
  });
});

describe('inspect', () => {
  it('--json prints the summary with the documented fields', async () => {
    const r = await runCli(['inspect', dynamic, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    for (const k of ['irVersion', 'opsetImports', 'producer', 'inputs', 'outputs', 'nodeCount', 'opHistogram', 'initializerBytes', 'dynamicInputs']) {
      expect(s).toHaveProperty(k);
    }
    expect(s.inputs).toEqual([{ name: 'input', elemType: 'float32', shape: ['batch', 3, 'height', 'width'] }]);
    expect(s.dynamicInputs).toEqual([{ name: 'input', dims: ['batch', 'height', 'width'] }]);
  });

  it('prints a readable summary without --json', async () => {
    const r = await runCli(['inspect', fixed]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/input\s+float32 \[1, 3, 224, 224\]/);
    expect(r.stdout).toMatch(/Conv\s+3/);
  });

  it.each(['empty', 'random', 'truncated', 'text'] as const)('rejects a %s file with exit 2', async (kind) => {
    const p = writeBadFile(path.join(dir, `bad-${kind}.onnx`), kind);
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(p);
    expect(r.stderr).toMatch(/ONNX|empty/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // a message, not a stack trace
  });

  it('rejects a directory and a missing file with exit 2', async () => {
    expect((await runCli(['inspect', dir])).stderr).toMatch(/is a directory/);
    const r = await runCli(['inspect', path.join(dir, 'missing.onnx')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/model file not found/);
  });

  it('reads a path with spaces and non-ASCII characters', async () => {
    const sub = path.join(dir, 'Modèle ü 模型');
    fs.mkdirSync(sub);
    const p = writeModel(path.join(sub, 'my model.onnx'));
    const r = await runCli(['inspect', p, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).path).toBe(p);
  });

  it('reports an unreadable file (permission denied) with exit 2', async () => {
    const p = writeModel(path.join(dir, 'secret.onnx'));
    fs.chmodSync(p, 0o000);
    // root reads anything, so run the CLI as "nobody" where we are root.
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r = await runCli(['inspect', p], asNobody);
    expect(r.stderr).toMatch(/permission denied/);
    expect(r.code).toBe(2);
  });

  it('rejects a model with an absurd dimension, naming the input', async () => {
    const p = writeModel(path.join(dir, 'absurd.onnx'), { inputs: [{ name: 'frames', shape: [1, 2 ** 40, 3] }] });
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/input "frames" has an absurd dimension 1: 1099511627776/);
  });
});

describe('build input errors (before any worker runs)', () => {
  // Issue 34 (trtexec parity): no longer a usage error; it builds with each dynamic dimension 1.
  it('a dynamic input without shapes builds as trtexec builds it, warning with the input and the shape used', async () => {
    const out = path.join(dir, 'dyn.engine');
    const r = await runCli(['build', dynamic, '-o', out, '--backend', 'simulated', '--sim-duration', '0.2']);
    expect(r.code).toBe(0);
    expect(r.stderr + r.stdout).toContain('dynamic input "input" [batch, 3, height, width] was given no shapes: built for input: 1x3x1x1');
    expect(fs.existsSync(out)).toBe(true);
  });

  it('a model whose external data file is missing cannot be built (but can be inspected)', async () => {
    const sub = path.join(dir, 'ext');
    fs.mkdirSync(sub);
    const m = writeModel(path.join(sub, 'ext.onnx'), { externalData: 'ext.weights' });
    fs.rmSync(path.join(sub, 'ext.weights'));
    expect((await runCli(['inspect', m])).code).toBe(0);
    const r = await runCli(['build', m, '-o', path.join(sub, 'ext.engine')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/external data file "ext\.weights" .*not found/);
  });

  it('shapes for an unknown input or of the wrong rank are rejected', async () => {
    const r1 = await runCli(['build', fixed, '-o', path.join(dir, 'a.engine'), '--shapes', 'nope:1x3']);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/unknown input "nope"/);
    const r2 = await runCli(['build', dynamic, '-o', path.join(dir, 'b.engine'), '--shapes', 'input:1x3x224/1x3x224/1x3x224']);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/wrong rank/);
  });

  it('an output path in a missing or read-only directory is rejected', async () => {
    const r1 = await runCli(['build', fixed, '-o', path.join(dir, 'no', 'such', 'dir', 'x.engine')]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/output directory does not exist/);
    const ro = path.join(dir, 'readonly');
    fs.mkdirSync(ro, { mode: 0o555 });
    fs.chmodSync(ro, 0o555);
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const r2 = await runCli(['build', fixed, '-o', path.join(ro, 'x.engine')], asNobody);
    expect(r2.stderr).toMatch(/output directory .*readonly is not writable/);
    expect(r2.code).toBe(2);
    expect(fs.readdirSync(ro)).toEqual([]);
  });
});
