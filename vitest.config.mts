import * as os from 'node:os';
import * as path from 'node:path';
import { defineConfig } from 'vitest/config';

function testWorkers(): number {
  const asked = process.env.TBS_TEST_WORKERS;
  if (asked !== undefined && asked !== '') {
    const n = Number(asked);
    if (!Number.isInteger(n) || n < 1) throw new Error(`TBS_TEST_WORKERS must be a whole number of at least 1, not "${asked}"`);
    return n;
  }
  return Math.max(2, os.availableParallelism());
}

// Unit and integration suites of every layer. Processes, files and sockets are real; only
// Electron is mocked (its binary cannot run here). Slow suites set their own timeouts.
export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'apps/**/*.test.tsx', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files at once. Most files spend their time waiting on the processes they start (CLIs, build
    // workers, serve, redis-server) and on simulated builds rather than computing: cli-trtexec
    // used 26 s of CPU for 35 s of wall time. vitest's default (cores - 1) runs one file at a
    // time on a 2-core CI machine and leaves the second core mostly idle; one file per core (at
    // least two) fills it. Each file runs in its own process with its own temp folders and ports.
    // TBS_TEST_WORKERS overrides it (TBS_TEST_WORKERS=1: one file at a time, as before).
    maxWorkers: testWorkers(),
    reporters: ['default'],
    // Services started by tests keep build profiles (predicted end) in the state directory: never
    // the user's own (~/.local/state), always a scratch folder of this run.
    env: { TBS_STATE_DIR: path.join(os.tmpdir(), `tbs-test-state-${process.pid}`) },
    // Per file, a TMPDIR and a TBS_STATE_DIR of its own (replacing the one above), so two files
    // running at once never share the default engine folder, crash records or build profiles.
    setupFiles: ['test/support/per-file-tmp.ts'],
  },
});
