// The Engine view (issue 36 item 4) in Chromium against the real `serve`: a simulated fp16 build's
// layers (GET /api/builds/{id}/layers), a layer file and its profile dropped in and read in the
// page, sorting, filtering, expanding a row, two engines side by side, at 1280×800 and 900×700.
import type { Page } from '@playwright/test';
import { generateEngineFiles } from '../test/support/engine-layer-files';
import { expect, test } from './fixtures';

/** Drops files on an element the way a user's drag does (a DataTransfer holding File objects). */
async function dropFiles(page: Page, selector: string, files: Array<{ name: string; text: string }>): Promise<void> {
  const dt = await page.evaluateHandle((fs) => {
    const d = new DataTransfer();
    for (const f of fs) d.items.add(new File([f.text], f.name, { type: 'application/json' }));
    return d;
  }, files);
  await page.dispatchEvent(selector, 'dragover', { dataTransfer: dt });
  await page.dispatchEvent(selector, 'drop', { dataTransfer: dt });
}

const rowNames = (page: Page) => page.locator('.engine-scroll [role="row"] .lname-text').allInnerTexts();

test('a build and dropped files in the Engine view: sort, filter, expand, compare', async ({ studio }) => {
  test.setTimeout(120_000);
  const { page, models } = studio;
  test.skip(studio.kind !== 'web', 'files are read through the page (web); the Electron host has no buildLayers yet');
  await page.setViewportSize({ width: 1280, height: 800 });
  await studio.openModel(models.small);
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await page.getByLabel('Duration (s)', { exact: true }).fill('0.5');
  await page.getByRole('checkbox', { name: /^fp16/ }).check();
  await page.getByRole('button', { name: 'Build', exact: true }).click();
  await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 60_000 });
  // The finished build says how its layers came out.
  await expect(page.getByRole('group', { name: 'Build summary' })).toContainText(/Layers: (all \d+ compute layers run FP16|\d+ of \d+ compute layers run FP16)/);

  const panel = page.getByRole('region', { name: 'Engine layers' });
  await expect(panel).toContainText(/Layers: /);
  await studio.shot('engine-panel-1280x800');
  await panel.getByRole('button', { name: 'Show layers' }).click();
  const view = page.getByRole('dialog', { name: 'Engine view' });
  await expect(view).toBeVisible();
  await expect(view.getByRole('grid', { name: 'Layers' })).toBeVisible();
  await expect(view).toContainText(/\d+ layers · TensorRT 10\.x/);
  await expect(view.getByRole('img', { name: /Layers per precision: fp32 \d+, fp16 \d+/ })).toBeVisible();
  const names = await rowNames(page);
  expect(names.length).toBeGreaterThan(3);
  expect(names[0]).toMatch(/^Reformatting CopyNode for Input Tensor 0/);
  // Expand the first row from the keyboard: its fused operations show.
  await view.getByRole('rowgroup', { name: /Layer rows/ }).focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await expect(view.getByRole('note', { name: /Details of / })).toContainText('Fused operations');
  await studio.shot('engine-view-build-1280x800');

  // Compare with a build of the same model in FP32: the changed layers are marked.
  await page.keyboard.press('Escape');
  await expect(view).toBeHidden();
  await page.getByRole('checkbox', { name: /^fp16/ }).uncheck();
  await page.getByRole('button', { name: 'Build', exact: true }).click();
  await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 60_000 });
  await panel.getByRole('button', { name: 'Engine view' }).click();
  // Engine a is still the fp16 build; b is the newest build (the fp32 one), the last choice.
  const pickB = view.getByRole('group', { name: 'Engine b' }).getByRole('combobox');
  // History learns of the second build a moment after it ends: wait for both builds to be offered.
  await expect(pickB.locator('option')).toHaveCount(3);
  await pickB.selectOption({ index: 2 });
  await expect(view).toContainText(/\d+ layers? changed/);
  await view.getByRole('checkbox', { name: 'changed only' }).check();
  await expect(view.locator('.engine-row.changed').first()).toBeVisible();
  expect(await view.locator('.engine-scroll [role="row"]').count()).toBe(await view.locator('.engine-scroll .engine-row.changed').count());
  await studio.shot('engine-view-compare-1280x800');
  await view.getByRole('button', { name: 'Remove engine a' }).click();
  await view.getByRole('button', { name: 'Remove engine a' }).click();

  // A 2,000-layer file with its profile, dropped on the view: read in the page.
  const files = generateEngineFiles(2000);
  await dropFiles(page, '.engine-view-backdrop', [
    { name: 'model.layers.json', text: files.layers },
    { name: 'model.profile.json', text: files.profile },
  ]);
  await expect(view.getByRole('group', { name: 'Engine a' })).toContainText('model.layers.json + model.profile.json');
  await expect(view).toContainText('2000 layers');
  // Virtualized: far fewer rows in the page than layers.
  expect(await view.locator('.engine-scroll [role="row"]').count()).toBeLessThan(120);
  // Sort by time (slowest first), then filter by precision and name.
  await view.getByRole('button', { name: /^Time ms/ }).click();
  await expect(view.getByRole('columnheader', { name: /Time ms/ })).toHaveAttribute('aria-sort', 'descending');
  const times = await view.locator('.engine-scroll [role="row"] [role="gridcell"].num:not(.share)').allInnerTexts();
  const nums = times.slice(0, 10).map(Number);
  expect(nums).toEqual([...nums].sort((x, y) => y - x));
  await view.getByLabel('Filter by precision').selectOption('fp32');
  await expect(view).toContainText(/\d+ of 2000 layers/);
  for (const p of await view.locator('.engine-scroll [role="row"] .prec').allInnerTexts()) expect(p).toBe('fp32');
  await view.getByLabel('Filter by name').fill('stage1/');
  await expect(view.locator('.engine-count')).toHaveText(/^\d+ of 2000 layers$/);
  for (const n of await rowNames(page)) expect(n).toContain('stage1/');
  await studio.shot('engine-view-files-1280x800');

  // The small window: the view still fits and reads.
  await view.getByLabel('Filter by name').fill('');
  await view.getByLabel('Filter by precision').selectOption('');
  await page.setViewportSize({ width: 900, height: 700 });
  await expect(view.getByRole('grid', { name: 'Layers' })).toBeVisible();
  await studio.shot('engine-view-files-900x700');
  // A bad file: one line naming it, nothing else changes.
  await dropFiles(page, '.engine-view-backdrop', [{ name: 'broken.json', text: '{"Layers": [' }]);
  await expect(view.getByRole('alert')).toContainText('broken.json');
  await page.keyboard.press('Escape');
  await expect(view).toBeHidden();
  // In a narrow window the panel is the "Layers" tab under the tree.
  await page.getByRole('tab', { name: 'Layers' }).click();
  await expect(page.getByRole('region', { name: 'Engine layers' })).toBeVisible();
  await studio.shot('engine-panel-900x700');
});
