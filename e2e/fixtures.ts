// The `studio` fixture hides the one difference between the targets: how a file gets chosen and
// where a saved engine lands. Web: the browser's file chooser and a download. Electron: native
// dialogs, replaced in the main process for the duration of the test.
import { _electron, chromium, test as base, expect, type Browser, type ElectronApplication, type Page } from '@playwright/test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { E2eModels } from './global-setup';

export const ROOT = path.resolve(__dirname, '..');
export const ARTIFACTS = path.join(ROOT, 'e2e', 'artifacts');

export interface Studio {
  kind: 'web' | 'electron';
  page: Page;
  models: E2eModels;
  /** A fresh directory for this test's files (timing caches, saved engines). */
  scratch: string;
  /** Opens a model with the Open model… button, or with Ctrl+O. */
  openModel(file: string, via?: 'button' | 'shortcut'): Promise<void>;
  /** Saves the engine with Save engine… (or Ctrl+S) and returns the bytes that were written. */
  saveEngine(via?: 'button' | 'shortcut'): Promise<Buffer>;
  /** The newest build as the service keeps it (web only: the API is not reachable in Electron). */
  latestBuild(): Promise<{ id: string; outputPath?: string; state: string } | null>;
  shot(name: string): Promise<void>;
}

let printedElectronSkip = false;

/**
 * These tests watch real (simulated) builds; with "Reuse an up-to-date engine" on (the form's
 * default) a second build of one model would end at once. It is turned off for them; the tests of
 * reuse turn it back on. Typed while the model loads, it carries over to the model's form.
 */
async function buildForReal(page: Page, file: string): Promise<void> {
  // Once the model is open: a model opened after another gets its own form (reuse on again).
  await expect(page.getByRole('region', { name: 'Model' })).toContainText(path.basename(file), { timeout: 30_000 });
  await page.getByLabel('Reuse an up-to-date engine', { exact: true }).uncheck();
}
const mod = process.platform === 'darwin' ? 'Meta' : 'Control';

export const test = base.extend<{ studio: Studio }, { lazyBrowser: () => Promise<Browser> }>({
  // Launched on first use only, so the electron project never starts a Chromium it cannot find.
  lazyBrowser: [
    // Playwright reads a fixture's dependencies from its first parameter's pattern: none here.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use, workerInfo) => {
      let browser: Promise<Browser> | undefined;
      await use(() => (browser ??= chromium.launch(workerInfo.project.use.launchOptions)));
      if (browser) await (await browser).close();
    },
    { scope: 'worker' },
  ],
  studio: async ({ lazyBrowser }, use, testInfo) => {
    const models = JSON.parse(process.env.E2E_MODELS ?? 'null') as E2eModels;
    if (!models) throw new Error('E2E_MODELS missing: run through `npm run test:e2e` (global-setup.ts)');
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-e2e-t-'));
    const shot = async (page: Page, name: string) => {
      await page.screenshot({ path: path.join(ARTIFACTS, `${testInfo.project.name}-${name}.png`) });
    };

    if (testInfo.project.name === 'electron') {
      const exe = process.env.ELECTRON_PATH;
      if (!exe) {
        if (!printedElectronSkip) {
          console.log('[electron] skipped: ELECTRON_PATH is not set (the Electron binary cannot be downloaded here).');
          printedElectronSkip = true;
        }
        testInfo.skip(true, 'ELECTRON_PATH is not set: no Electron binary on this machine');
        return;
      }
      const app: ElectronApplication = await _electron.launch({
        executablePath: exe,
        args: ['.'],
        cwd: ROOT,
        // Its own profile folder (history, recent models, engines, window state), so a run
        // neither reads nor changes the profile of whoever runs the tests.
        env: {
          ...process.env,
          TBS_E2E_TIMING_CACHE: path.join(scratch, 'timing.cache'),
          TBS_USER_DATA_DIR: path.join(scratch, 'user-data'),
          TBS_STATE_DIR: path.join(scratch, 'state'),
        } as Record<string, string>,
      });
      const page = await app.firstWindow();
      await page.setViewportSize({ width: 1400, height: 900 }).catch(() => undefined);
      const studio: Studio = {
        kind: 'electron',
        page,
        models,
        scratch,
        async openModel(file, via = 'button') {
          await app.evaluate(({ dialog }, p) => {
            dialog.showOpenDialog = (async () => ({ canceled: false, filePaths: [p] })) as typeof dialog.showOpenDialog;
          }, file);
          if (via === 'button') await page.getByRole('button', { name: 'Open model…' }).click();
          else await page.keyboard.press(`${mod}+o`);
          await buildForReal(page, file);
        },
        async saveEngine(via = 'button') {
          const target = path.join(scratch, `saved-${Date.now()}.engine`);
          await app.evaluate(({ dialog }, p) => {
            dialog.showSaveDialog = (async () => ({ canceled: false, filePath: p })) as typeof dialog.showSaveDialog;
          }, target);
          if (via === 'button') await page.getByRole('button', { name: 'Save engine…' }).click();
          else await page.keyboard.press(`${mod}+s`);
          await expect.poll(() => fs.existsSync(target), { timeout: 15_000 }).toBe(true);
          return fs.readFileSync(target);
        },
        latestBuild: async () => null,
        shot: (name) => shot(page, name),
      };
      await use(studio);
      await app.close();
      fs.rmSync(scratch, { recursive: true, force: true });
      return;
    }

    const url = process.env.E2E_SERVER_URL!;
    const token = process.env.E2E_TOKEN!;
    const api = new URL(url).origin;
    const ctx = await (await lazyBrowser()).newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
    const page = await ctx.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      // The browser logs every non-2xx fetch; a 4xx (a bad model is answered 422) is expected
      // and shown to the user properly, so only server errors count.
      if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await page.goto(url); // sets the session cookie and redirects to /
    await expect(page.getByRole('status')).toContainText('Idle');
    const studio: Studio = {
      kind: 'web',
      page,
      models,
      scratch,
      async openModel(file, via = 'button') {
        const chooser = page.waitForEvent('filechooser');
        if (via === 'button') await page.getByRole('button', { name: 'Open model…' }).click();
        else await page.keyboard.press(`${mod}+o`);
        await (await chooser).setFiles(file);
        await buildForReal(page, file);
      },
      async saveEngine(via = 'button') {
        const download = page.waitForEvent('download');
        if (via === 'button') await page.getByRole('button', { name: 'Save engine…' }).click();
        else await page.keyboard.press(`${mod}+s`);
        const d = await download;
        const target = path.join(scratch, d.suggestedFilename() || 'engine.bin');
        await d.saveAs(target);
        return fs.readFileSync(target);
      },
      async latestBuild() {
        const res = await fetch(`${api}/api/builds`, { headers: { authorization: `Bearer ${token}` } });
        const all = (await res.json()) as { id: string; outputPath?: string; state: string }[];
        return all[all.length - 1] ?? null;
      },
      shot: (name) => shot(page, name),
    };
    await use(studio);
    // CSP violations and uncaught errors show up here; a clean page is part of every test.
    expect(problems, 'page errors').toEqual([]);
    await ctx.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  },
});

export { expect };
