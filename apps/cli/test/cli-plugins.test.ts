// Plugins and precision warnings through the real CLI with the simulated backend (dist/ must be
// built), which models what TensorRT does as trtexec sets it up: the standard plugins are
// initialized before the parse, so a standard plugin op (EfficientNMS_TRT) builds; any other op of a
// custom domain needs a user plugin library and fails, naming the node and the op, without one.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

type Ev = { type: string; status?: string; error?: string; message?: string; severity?: string };

let dir: string;
let custom: string;
let nms: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-plugins-');
  custom = writeModel(path.join(dir, 'custom.onnx'), { layers: 1, extraNodes: [{ op: 'MyCustomOp', inputs: ['probs'], outputs: ['custom_out'], domain: 'com.example' }] });
  nms = writeModel(path.join(dir, 'nms.onnx'), { layers: 1, extraNodes: [{ op: 'EfficientNMS_TRT', inputs: ['probs'], outputs: ['nms_out'], domain: 'TRT' }] });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const finished = (stdout: string) => (parseNdjson(stdout) as Ev[]).find((e) => e.type === 'build.finished');
const warnings = (stdout: string) => (parseNdjson(stdout) as Ev[]).filter((e) => e.type === 'log' && e.severity === 'warning').map((e) => e.message ?? '');

describe('plugins (simulated)', () => {
  it('a custom op without its plugin library fails, naming the node, the op and how to supply it', async () => {
    const engine = path.join(dir, 'custom.engine');
    const r = await runCli(['build', custom, '-o', engine, '--backend', 'simulated', '--json']);
    expect(r.code).toBe(1);
    const f = finished(r.stdout)!;
    expect(f.status).toBe('failed');
    expect(f.error).toMatch(/node "mycustomop_\d+" \(op com\.example\.MyCustomOp\): no TensorRT plugin is registered for op "MyCustomOp"/);
    expect(f.error).toContain('--dynamic-plugins <lib.so>');
    expect(fs.existsSync(engine)).toBe(false);
  });

  it('with the plugin library supplied (build --dynamic-plugins, trtexec --dynamicPlugins) it builds; a missing library exits 2 naming it', async () => {
    // The simulator cannot look inside a library: an existing file stands for one registering the op.
    const lib = path.join(dir, 'libmy_plugin.so');
    fs.writeFileSync(lib, 'stand-in plugin library');
    const b = await runCli(['build', custom, '-o', path.join(dir, 'c1.engine'), '--backend', 'simulated', '--dynamic-plugins', lib, '--json']);
    expect(b.code).toBe(0);
    expect((parseNdjson(b.stdout) as Ev[]).some((e) => e.type === 'log' && e.message === `Loading supplied plugin library (dynamic, simulated): ${lib}`)).toBe(true);
    const t = await runCli([
      'trtexec',
      `--onnx=${custom}`,
      `--saveEngine=${path.join(dir, 'c2.engine')}`,
      `--staticPlugins=${lib}`,
      `--setPluginsToSerialize=${lib}`,
      '--backend=simulated',
      '--json',
    ]);
    expect(t.code).toBe(0);
    const missing = await runCli(['build', custom, '-o', path.join(dir, 'c3.engine'), '--backend', 'simulated', '--dynamic-plugins', path.join(dir, 'nope.so')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`dynamicPlugins: plugin library not found: ${path.join(dir, 'nope.so')}`);
  });

  it('a standard plugin op (EfficientNMS_TRT) builds: the standard plugins are initialized first', async () => {
    const r = await runCli(['build', nms, '-o', path.join(dir, 'nms.engine'), '--backend', 'simulated', '--json']);
    expect(r.code).toBe(0);
    expect((parseNdjson(r.stdout) as Ev[]).some((e) => e.type === 'log' && /Loading standard plugins/.test(e.message ?? ''))).toBe(true);
  });

  it('backends --json lists the plugin library and the number of plugin creators', async () => {
    const r = await runCli(['backends', '--json']);
    const sim = (JSON.parse(r.stdout) as { name: string; plugins?: { creators?: number } }[]).find((b) => b.name === 'simulated')!;
    expect(sim.plugins?.creators).toBeGreaterThan(0);
  });
});

describe('precision warnings (simulated)', () => {
  const model = () => writeModel(path.join(dir, 'p.onnx'), { layers: 1 });
  it('int8 without Q/DQ nodes: placeholder ranges, accuracy meaningless; and every weak precision flag deprecated on 10.16', async () => {
    const r = await runCli(['build', model(), '-o', path.join(dir, 'i8.engine'), '--backend', 'simulated', '--int8', '--fp16', '--json']);
    expect(r.code).toBe(0);
    const w = warnings(r.stdout);
    expect(w).toContainEqual(
      expect.stringMatching(/^int8 without calibration data or Q\/DQ nodes: placeholder dynamic ranges .* accuracy is meaningless; use it only to measure performance/),
    );
    expect(w).toContainEqual(expect.stringMatching(/^precision "fp16" is a weakly typed precision flag, deprecated since TensorRT 10\.12/));
    expect(w).toContainEqual(expect.stringMatching(/^precision "int8" is a weakly typed precision flag, deprecated since TensorRT 10\.12/));
  });
  it('before 10.12 the flags are not deprecated, and the int8 warning stays', async () => {
    const r = await runCli(['build', model(), '-o', path.join(dir, 'i8b.engine'), '--backend', 'simulated', '--int8', '--json'], {
      env: { ...process.env, TBS_SIM_TRT_VERSION: '10.3.0' },
    });
    expect(r.code).toBe(0);
    const w = warnings(r.stdout);
    expect(w.some((m) => m.includes('deprecated since TensorRT 10.12'))).toBe(false);
    expect(w.some((m) => m.startsWith('int8 without calibration data'))).toBe(true);
  });
});
