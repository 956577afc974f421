import * as os from 'node:os';
import * as path from 'node:path';
import { defineConfig } from 'vitest/config';

// Unit and integration suites of every layer. Processes, files and sockets are real; only
// Electron is mocked (its binary cannot run here). Slow suites set their own timeouts.
export default defineConfig({
  test: {
    include: ['apps/**/*.test.ts', 'apps/**/*.test.tsx', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'e2e/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
    // Services started by tests keep build profiles (predicted end) in the state directory: never
    // the user's own (~/.local/state), always a scratch folder of this run.
    env: { TBS_STATE_DIR: path.join(os.tmpdir(), `tbs-test-state-${process.pid}`) },
  },
});
