// One set of specs, two targets. `web`: Debian's Chromium against a real `serve` (started by
// global-setup.ts) with the real addon and the simulated backend. `electron`: the app itself via
// _electron.launch, when ELECTRON_PATH points at an Electron binary (it cannot be downloaded
// here, so that project skips itself with the reason printed).
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium';

export default defineConfig({
  testDir: '.',
  testMatch: /.*\.spec\.ts$/,
  outputDir: '../test-results/e2e',
  globalSetup: './global-setup.ts',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    viewport: { width: 1400, height: 900 },
    actionTimeout: 15_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects: [
    {
      name: 'web',
      use: {
        browserName: 'chromium',
        acceptDownloads: true,
        launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
      },
    },
    { name: 'electron' },
  ],
});
