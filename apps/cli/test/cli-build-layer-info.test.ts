// `build --dump-layer-info / --export-layer-info`: trtexec's layer exports on the product's own
// command, through the real CLI in a child process (dist/ must be built). The export is the
// engine's layer information byte for byte; with --json stdout stays NDJSON.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNdjson, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-layer-info-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 3 });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const sim = ['--backend', 'simulated', '--sim-duration', '0.2'];

describe('build layer exports', () => {
  it('--export-layer-info writes the layer information where asked; --dump-layer-info prints it (on stderr with --json)', async () => {
    const engine = path.join(dir, 'a.engine');
    const exported = path.join(dir, 'exports', 'a.layers.json');
    fs.mkdirSync(path.dirname(exported));
    const r = await runCli(['build', model, '-o', engine, ...sim, '--profiling-verbosity', 'detailed', '--dump-layer-info', '--export-layer-info', exported, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const layers = fs.readFileSync(`${engine}.layers.json`, 'utf8');
    expect(fs.readFileSync(exported, 'utf8')).toBe(layers);
    expect(JSON.parse(layers)).toHaveProperty('Layers');
    expect(r.stderr).toContain(layers.trim().slice(0, 200));
    // stdout is the event stream alone, ending in build.finished.
    const events = parseNdjson(r.stdout) as { type: string; status?: string }[];
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(fs.readdirSync(path.dirname(exported))).toEqual(['a.layers.json']);
  });

  it('without --json the dump goes to stdout and the export is announced on stderr', async () => {
    const engine = path.join(dir, 'b.engine');
    const exported = path.join(dir, 'b-export.json');
    const r = await runCli(['build', model, '-o', engine, ...sim, '--dump-layer-info', `--export-layer-info=${exported}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(fs.readFileSync(`${engine}.layers.json`, 'utf8').trim().slice(0, 200));
    expect(r.stderr).toContain(`layer information written to ${exported}`);
  });

  it('an export that cannot be written is exit 1 naming the flag, after the engine is kept', async () => {
    const engine = path.join(dir, 'c.engine');
    const r = await runCli(['build', model, '-o', engine, ...sim, '--export-layer-info', path.join(dir, 'missing', 'c.json')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/build: --export-layer-info: cannot write .*missing\/c\.json/);
    expect(fs.existsSync(engine)).toBe(true);
  });

  it('an empty export path is a usage error; `check` refuses the flags as not build options', async () => {
    const r = await runCli(['build', model, '-o', path.join(dir, 'd.engine'), ...sim, '--export-layer-info=']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--export-layer-info needs a file/);
    const c = await runCli(['check', path.join(dir, 'a.engine'), '--dump-layer-info']);
    expect(c.code).toBe(2);
    expect(c.stderr).toMatch(/takes build options, not --dump-layer-info/);
  });
});
