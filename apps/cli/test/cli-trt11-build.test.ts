// A TensorRT 11.1 build through the whole product: the real CLI, service, worker, addon and 11.1
// adapter, against the scripted fake libnvinfer / parser built from the 11.1 headers
// (native/test/trt/fake_full_*.cc) and the fake CUDA driver and NVML (native/test/fake_*.cc). Our
// own fakes, not NVIDIA's libraries: this proves what the product does with what TensorRT is
// documented to return, not what a real 11.1 returns. The fake parser reads the model file as its
// script (fake_full_script.h), so the ONNX models here carry script lines in their doc string
// ("cache-add 3": the build measures three tactics). Skipped, saying why, where the addon was built
// without 11.x headers (test/support/trt-fakes.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { trtFakeBuild } from '../../../test/support/trt-fakes.js';
import type { EngineManifest } from '../../shared/engine-manifest.js';

const fake = trtFakeBuild(11);
const missing = 'missing' in fake ? fake.missing : undefined;
if (missing) console.warn(`skipped: TensorRT 11.1 build tests: ${missing}`);

type Ev = { type: string; status?: string; error?: string; message?: string; severity?: string };

describe.skipIf(missing !== undefined)('a TensorRT 11.1 build (11.1 adapter × fake 11.1): manifest, layer information, pinned cache', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  /** A valid ONNX model whose doc string holds fake-parser script lines. */
  const model = (name: string, script: string) => writeModel(path.join(dir, name), { layers: 1, mutate: (m) => void (m.docString = `\n${script}\n`) });
  const build = async (args: string[]) => {
    const r = await runCli(['build', ...args, '--backend', 'tensorrt', '--json'], { env });
    const events = parseNdjson(r.stdout) as Ev[];
    return { ...r, events, finished: events.find((e) => e.type === 'build.finished') };
  };
  const manifestOf = (engine: string) => JSON.parse(fs.readFileSync(`${engine}.manifest.json`, 'utf8')) as EngineManifest;

  beforeAll(() => {
    if ('missing' in fake) return;
    dir = tempDir('tbs-trt11-build-');
    env = { ...process.env, ...fake.env, TBS_STATE_DIR: path.join(dir, 'state') };
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the manifest names the GPU's UUID and the NVIDIA driver's version; layer information is IEngineInspector's", async () => {
    const engine = path.join(dir, 'a.engine');
    const r = await build([model('a.onnx', 'engine-bytes 3000'), '-o', engine]);
    expect(r.finished, r.stderr).toMatchObject({ status: 'succeeded' });
    const m = manifestOf(engine);
    expect(m.backend).toBe('tensorrt');
    expect(m.tensorrt).toMatchObject({ version: '11.1.0', adapterHeaderVersion: '11.1.0' });
    // The fake driver's device 0 and the fake NVML's version (native/test/fake_cuda_driver.cc, fake_nvml.cc).
    expect(m.gpu).toMatchObject({ name: 'Fake RTX 3090', computeCapability: '8.6', uuid: 'GPU-10111213-1415-1617-1819-1a1b1c1d1e1f' });
    expect(m.driverVersion).toBe('580.95.05');
    expect(m.layerInfo).toMatchObject({ file: 'a.engine.layers.json', source: 'IEngineInspector' });
    // Default profiling verbosity: the layers by name only, as TensorRT gives them.
    expect(JSON.parse(fs.readFileSync(`${engine}.layers.json`, 'utf8'))).toEqual({ Layers: ['fake_conv', 'fake_relu'], Bindings: ['x', 'y'] });

    // On device 1 the listing's UUID (device 0's) is not this GPU's: null, never another's.
    const other = path.join(dir, 'd1.engine');
    expect((await build([model('d1.onnx', 'engine-bytes 3000'), '-o', other, '--device', '1'])).finished).toMatchObject({ status: 'succeeded' });
    expect(manifestOf(other).gpu).toMatchObject({ uuid: null, device: 1 });

    const backends = JSON.parse((await runCli(['backends', '--json'], { env })).stdout) as Array<{
      name: string;
      gpu?: { uuid?: string };
      cudaDriver?: { driverVersion?: string };
    }>;
    const trt = backends.find((b) => b.name === 'tensorrt')!;
    expect(trt.gpu?.uuid).toBe('GPU-10111213-1415-1617-1819-1a1b1c1d1e1f');
    expect(trt.cudaDriver?.driverVersion).toBe('580.95.05');
  });

  it('detailed profiling verbosity gives per-layer records that compare reads', async () => {
    const a = path.join(dir, 'names.engine');
    const b = path.join(dir, 'detailed.engine');
    const m = model('c.onnx', 'engine-bytes 3000');
    expect((await build([m, '-o', a])).finished).toMatchObject({ status: 'succeeded' });
    expect((await build([m, '-o', b, '--profiling-verbosity', 'detailed'])).finished).toMatchObject({ status: 'succeeded' });
    const layers = JSON.parse(fs.readFileSync(`${b}.layers.json`, 'utf8')) as { Layers: Array<{ Name: string; TacticName?: string }> };
    expect(layers.Layers.map((l) => [l.Name, l.TacticName])).toEqual([
      ['fake_conv', 'fake_sm90_xmma_fprop_f16'],
      ['fake_relu', 'fake_pointwise'],
    ]);
    const c = await runCli(['compare', a, b, '--json'], { env });
    expect(c.code, c.stderr).toBe(0);
    const cmp = JSON.parse(c.stdout) as { inputs: Array<{ what: string }>; layers?: Array<{ name: string; what: string[]; b?: { tactic?: string; precision?: string } }> };
    expect(cmp.inputs.map((i) => i.what).join(' ')).toContain('profilingVerbosity');
    expect(cmp.layers?.find((l) => l.name === 'fake_conv')).toMatchObject({ b: { tactic: 'fake_sm90_xmma_fprop_f16', precision: 'fp16' } });
  });

  it('a pinned build runs from the cache, leaves it as it was, records the pin, and fails on a miss', async () => {
    const cache = path.join(dir, 'pinned.cache');
    const three = model('three.onnx', 'cache-add 3');
    expect((await build([three, '-o', path.join(dir, 'fill.engine'), '--timing-cache', cache])).finished).toMatchObject({ status: 'succeeded' });
    const filled = fs.readFileSync(cache);

    const engine = path.join(dir, 'pinned.engine');
    const ok = await build([three, '-o', engine, '--pinned-cache', cache]);
    expect(ok.finished, ok.stderr).toMatchObject({ status: 'succeeded' });
    expect(ok.events.some((e) => e.type === 'log' && e.message?.includes('pinned build: timing cache') === true)).toBe(true);
    expect(fs.readFileSync(cache).equals(filled)).toBe(true);
    expect(manifestOf(engine).pinnedCache).toMatchObject({ path: cache, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    // Five tactics, three in the cache: TensorRT fails the build at the first miss.
    const missed = path.join(dir, 'missed.engine');
    const miss = await build([model('five.onnx', 'cache-add 5'), '-o', missed, '--pinned-cache', cache]);
    expect(miss.code).toBe(1);
    expect(miss.finished).toMatchObject({ status: 'failed' });
    expect(miss.finished?.error).toContain('pinned timing cache');
    expect(miss.finished?.error).toContain('timing cache miss for entry-3');
    expect(fs.existsSync(missed)).toBe(false);
    expect(fs.readFileSync(cache).equals(filled)).toBe(true);
  });
});
