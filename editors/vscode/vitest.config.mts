// The extension's unit tests on their own (`npx vitest run --config editors/vscode/vitest.config.mts`);
// the root config runs them too once its include list names editors/vscode/test.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('.', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
