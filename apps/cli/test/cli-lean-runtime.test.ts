// trtexec accepts --excludeLeanRuntime without --versionCompatible (TensorRT then ignores the
// flag); so does the studio, and it says what the engine is: not version compatible, lean runtime
// included.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { requireBuilt, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

requireBuilt();
const dir = tempDir('tbs-cli-lean-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('excludeLeanRuntime alone', () => {
  it.each([
    ['build', (m: string, e: string) => ['build', m, '-o', e, '--exclude-lean-runtime', '--backend', 'simulated', '--sim-duration', '0.2', '--json']],
    ['trtexec', (m: string, e: string) => ['trtexec', `--onnx=${m}`, `--saveEngine=${e}`, '--excludeLeanRuntime', '--backend=simulated', '--json']],
  ])('%s builds it, with a warning that TensorRT ignores it', async (_cmd, args) => {
    const model = writeModel(path.join(dir, `${_cmd}.onnx`), { layers: 2 });
    const engine = path.join(dir, `${_cmd}.engine`);
    const r = await runCli(args(model, engine));
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BuildEvent);
    expect(events.some((e) => e.type === 'log' && e.severity === 'warning' && /excludeLeanRuntime without versionCompatible: TensorRT ignores it/.test(e.message))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
  });
});
