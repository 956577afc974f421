// Issue 37 items 3 and 5 in a real page against a real `serve`: in a small window (900×700) the
// shape field of a dynamic model is on screen as soon as the model opens, with no scrolling by the
// user; a model the checker refuses shows a short first line, the problems as a list one opens,
// and a status line that says "Model refused". Screenshots at 1280×800 and 900×700 go to
// e2e/artifacts/ to be looked at.
import * as path from 'node:path';
import { writeModel } from '../test/support/onnx-gen';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

/**
 * Opens a model as a user does, and nothing else: the fixture's openModel also unticks "Reuse an
 * up-to-date engine", and Playwright scrolls that checkbox into view, which would scroll the
 * left column for the user and defeat what these tests measure. The file chooser is the browser's
 * (the desktop app's dialog is stubbed by the fixture instead): web only.
 */
async function openAsUser(page: Page, file: string): Promise<void> {
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Open model…' }).click();
  await (await chooser).setFiles(file);
  await expect(page.getByRole('region', { name: 'Model' })).toContainText(path.basename(file), { timeout: 30_000 });
}

test('at 900×700 the shapes field of a dynamic model is in view without scrolling, and takes 1x3x…:…:…', async ({ studio }) => {
  test.skip(studio.kind !== 'web', 'opens the model through the browser file chooser');
  const { page, models } = studio;
  await page.setViewportSize({ width: 900, height: 700 });
  await openAsUser(page, models.dynamic);
  const field = page.getByLabel('input shape', { exact: true });
  await expect(field).toBeInViewport({ ratio: 1 });
  await expect(page.locator('.shapes .hint')).toBeInViewport({ ratio: 1 });
  await expect(field).toHaveAttribute('placeholder', '?x3x?x? → built as 1x3x1x1 if left empty');
  await field.fill('1x3x32x32:2x3x64x64:4x3x64x64');
  await expect(page.locator('.shape-input .field-error')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Build', exact: true })).toBeEnabled();
  // The boxes behind the field show what it says.
  await page.getByText('per dimension', { exact: true }).click();
  await expect(page.getByLabel('input batch max', { exact: true })).toHaveValue('4');
  await expect(page.getByLabel('input height min', { exact: true })).toHaveValue('32');
  // A wrong shape is named under the field, also in view.
  await field.fill('1x3x32x32:2x3x64x64');
  const error = page.locator('.shape-input .field-error');
  await expect(error).toHaveText('Input "input": give one shape (e.g. 1x3x1x1) or three as min:opt:max; "1x3x32x32:2x3x64x64" has 2 parts.');
  await expect(error).toBeInViewport();
  await studio.shot('shapes-900x700');
});

test('in a window shorter still (900×520) the opened model brings its shapes field into view', async ({ studio }) => {
  test.skip(studio.kind !== 'web', 'opens the model through the browser file chooser');
  const { page, models } = studio;
  await page.setViewportSize({ width: 900, height: 520 });
  await openAsUser(page, models.dynamic);
  // The model's summary alone fills this column: the page scrolled it for the user.
  await expect(page.getByLabel('input shape', { exact: true })).toBeInViewport({ ratio: 1 });
  expect(await page.evaluate(() => document.querySelector('.col-left')!.scrollTop)).toBeGreaterThan(0);
});

for (const [width, height] of [
  [1280, 800],
  [900, 700],
] as const) {
  test(`a refused model at ${width}×${height}: the first line, the problems behind it, "Model refused"`, async ({ studio }) => {
    test.skip(studio.kind !== 'web', 'opens the model through the browser file chooser');
    const { page } = studio;
    await page.setViewportSize({ width, height });
    // Every node reads a tensor nothing produces: the checker refuses it with one problem a node.
    const p = writeModel(path.join(studio.scratch, 'many-problems.onnx'), {
      layers: 3,
      mutate: (m) => {
        for (const n of m.graph!.node!) n.input = n.input!.map((x) => `${x}_missing`);
      },
    });
    await openAsUser(page, p);
    const panel = page.getByRole('region', { name: 'Model' });
    const alert = panel.getByRole('alert');
    await expect(alert).toHaveText(/^"many-problems\.onnx" \(uploaded\) is not a valid ONNX model for TensorRT: \d+ problems/);
    await expect(alert).toBeInViewport({ ratio: 1 });
    // One line, not a wall: the alert is a few lines high at most.
    expect((await alert.boundingBox())!.height).toBeLessThan(70);
    await expect(page.getByRole('status')).toContainText('Model refused');
    await expect(page.getByRole('status')).not.toContainText('Idle');
    const summary = panel.locator('details.model-problems > summary');
    await expect(summary).toHaveText(/^The \d+ problems/);
    await expect(panel.locator('details.model-problems li').first()).toBeHidden();
    await studio.shot(`model-refused-${width}x${height}`);
    await summary.click();
    await expect(panel.locator('details.model-problems li').first()).toContainText('reads "');
    await expect(panel.locator('details.model-problems li').first()).toBeInViewport();
    await studio.shot(`model-refused-${width}x${height}-open`);
    await expect(page.getByRole('button', { name: 'Build', exact: true })).toBeDisabled();
  });
}
