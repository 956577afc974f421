// `inspect` and `build` on every class of invalid model the checker refuses: exit 2, the problem
// named on stderr (the node or tensor), nothing on stdout for inspect, no engine written, and no
// build started (the build's --json stream ends without a build id, or holds nothing at all).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireBuilt, runCli } from '../../../test/support/cli.js';
import { INVALID_MODELS, writeInvalidModel } from '../../../test/support/invalid-models.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

requireBuilt();
const dir = tempDir('tbs-cli-check-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('invalid models: exit 2 from inspect and build, naming the problem', () => {
  for (const c of INVALID_MODELS) {
    it(
      c.name,
      async () => {
        const model = writeInvalidModel(dir, c);
        const engine = path.join(path.dirname(model), 'm.engine');
        const [inspect, build] = await Promise.all([runCli(['inspect', model]), runCli(['build', model, '-o', engine, '--backend', 'simulated', '--sim-duration', '0.2'])]);
        expect(inspect.code, inspect.stderr).toBe(2);
        expect(inspect.stderr).toMatch(c.says);
        expect(inspect.stdout).toBe('');
        expect(build.code, build.stderr).toBe(2);
        expect(build.stderr).toMatch(c.says);
        expect(fs.existsSync(engine)).toBe(false);
      },
      60_000,
    );
  }
});
