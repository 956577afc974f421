// The workbench in a real browser, where layout and the clipboard are real: nothing overflows
// sideways at a laptop size or a small window, shapes are typed per symbolic dimension, the trtexec
// command follows the model and its options and is what lands on the clipboard, and each model
// keeps its own options.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const command = (page: Page) => page.getByLabel('trtexec command', { exact: true });

/** Panels whose content is wider than the panel (a sideways scrollbar or cut content), and the page. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const bad: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>('.panel, .toolbar, .statusbar')) {
      if (el.scrollWidth > el.clientWidth + 1) bad.push(`${el.className} (+${el.scrollWidth - el.clientWidth}px)`);
    }
    if (document.documentElement.scrollWidth > window.innerWidth) bad.push('page');
    return bad;
  });
}

for (const [width, height] of [
  [1280, 800],
  [900, 700],
]) {
  test(`at ${width}×${height} nothing overflows sideways: idle, a dynamic model, a build`, async ({ studio }) => {
    const { page, models } = studio;
    await page.setViewportSize({ width, height });
    expect(await overflowing(page)).toEqual([]);
    await studio.openModel(models.dynamic);
    await expect(page.getByLabel('input batch min', { exact: true })).toBeAttached();
    expect(await overflowing(page)).toEqual([]);
    // The shape fields are wide enough for a real dimension.
    const box = await page.getByLabel('input height max', { exact: true }).boundingBox();
    expect(box?.width ?? 0).toBeGreaterThanOrEqual(40);
    await studio.openModel(models.big);
    await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
    await page.getByLabel('Duration (s)', { exact: true }).fill('3');
    await button(page, 'Build').click();
    await expect(page.getByRole('status')).toContainText('Building');
    await expect(page.getByRole('treeitem', { name: /^Timing graph nodes \d/ })).toBeVisible({ timeout: 20_000 });
    expect(await overflowing(page)).toEqual([]);
    await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 30_000 });
    expect(await overflowing(page)).toEqual([]);
    await studio.shot(`workbench-${width}x${height}`);
  });
}

test('the trtexec command follows the model and options, and is what Copy puts on the clipboard', async ({ studio }) => {
  const { page, models } = studio;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  // The browser names the user's file (the service's upload path means nothing to them); the
  // desktop app names the model's path.
  const onnx = (file: string) => (studio.kind === 'web' ? file.split('/').pop()! : file);
  const small = onnx(models.small).replace(/\.onnx$/, '');
  const dynamic = onnx(models.dynamic).replace(/\.onnx$/, '');
  await studio.openModel(models.small);
  await expect(command(page)).toHaveText(`trtexec --onnx=${small}.onnx --saveEngine=${small}.sim.10.16.0.engine --builderOptimizationLevel=3 --skipInference`);
  await page.getByLabel('TF32', { exact: true }).uncheck();
  await page.getByLabel('Profiling verbosity', { exact: true }).selectOption('detailed');
  await expect(command(page)).toHaveText(
    `trtexec --onnx=${small}.onnx --saveEngine=${small}.sim.10.16.0.engine --builderOptimizationLevel=3 --noTF32 --profilingVerbosity=detailed --skipInference`,
  );
  await button(page, 'Copy as trtexec command').click();
  await expect(page.getByText('Copied to the clipboard.')).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await command(page).textContent());

  // Another model: its own form (defaults) and its own command, never the previous one.
  await studio.openModel(models.dynamic);
  await expect(page.getByLabel('TF32', { exact: true })).toBeChecked();
  // No shapes typed: built as trtexec builds it (each dynamic dimension 1), so no shape flags.
  await expect(command(page)).toHaveText(`trtexec --onnx=${dynamic}.onnx --saveEngine=${dynamic}.sim.10.16.0.engine --builderOptimizationLevel=3 --skipInference`);
  // Shapes as people type them: min:opt:max in one field.
  await page.getByLabel('input shape', { exact: true }).fill('1x3x64x64:2x3x64x64:4x3x128x128');
  await expect(command(page)).toHaveText(
    `trtexec --onnx=${dynamic}.onnx --saveEngine=${dynamic}.sim.10.16.0.engine --builderOptimizationLevel=3 --minShapes=input:1x3x64x64 --optShapes=input:2x3x64x64 --maxShapes=input:4x3x128x128 --skipInference`,
  );

  // Back to the first model: its options as they were left.
  await studio.openModel(models.small);
  await expect(page.getByLabel('TF32', { exact: true })).not.toBeChecked();
  await expect(command(page)).toContainText('--noTF32 --profilingVerbosity=detailed');
});

test('a relative timing-cache path is refused before Build, saying where paths resolve', async ({ studio }) => {
  const { page, models } = studio;
  await studio.openModel(models.small);
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await page.getByLabel('Timing cache file', { exact: true }).fill('caches/model.cache');
  await expect(button(page, 'Build')).toBeDisabled();
  await expect(page.locator('#build-blocker')).toContainText('"caches/model.cache" is a relative path: give the full path on the machine that runs the builds');
  await expect(page.getByRole('status')).toContainText('Idle');
});

test('a time budget set in the form cancels the build when it runs out, and says so', async ({ studio }) => {
  const { page, models } = studio;
  await studio.openModel(models.big);
  await expect(page.getByRole('region', { name: 'Model' })).toContainText('resnet-like.onnx');
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await page.getByLabel('Duration (s)', { exact: true }).fill('60');
  await page.getByLabel('Time budget (s)', { exact: true }).fill('2');
  await button(page, 'Build').click();
  await expect(page.getByRole('status')).toContainText('Building');
  await expect(page.getByRole('status')).toContainText('Cancelled', { timeout: 30_000 });
  await expect(page.getByRole('group', { name: 'Build summary' })).toContainText('the time budget ran out');
});

test('an engine the build left in the output folder is listed and can be deleted, from the list and the disk', async ({ studio }) => {
  const { page, models } = studio;
  await studio.openModel(models.small);
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await page.getByLabel('Duration (s)', { exact: true }).fill('1');
  await button(page, 'Build').click();
  await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 30_000 });
  const engines = page.getByRole('region', { name: 'Engines' });
  const written = studio.kind === 'web' ? (await studio.latestBuild())?.outputPath : undefined;
  if (studio.kind === 'web') expect(written && fs.existsSync(written)).toBeTruthy();
  // The newest file is first: the one this build wrote.
  const first = engines.getByRole('listitem').first();
  await expect(first.locator('label .tag')).toHaveText('sim');
  const name = (await first.locator('.engine-name').textContent())!;
  if (written) expect(name).toBe(path.basename(written));
  // Checked against its manifest: it fits here; Rebuild brings back the settings it was built with.
  await expect(first.locator('.engine-fit .tag')).toHaveText('fits', { timeout: 15_000 });
  if (studio.kind === 'web') {
    await page.getByLabel('Duration (s)', { exact: true }).fill('7');
    await first.getByRole('button', { name: 'Rebuild', exact: true }).click();
    await expect(page.getByLabel('Duration (s)', { exact: true })).toHaveValue('1');
    await expect(page.getByLabel('Backend', { exact: true })).toHaveValue('simulated');
  }
  await engines.getByLabel(`Select ${name}`, { exact: true }).check();
  await engines.getByRole('button', { name: 'Delete selected (1)', exact: true }).click();
  await expect(engines.getByRole('alertdialog')).toContainText('Delete 1 engine');
  await studio.shot('engines-confirm');
  await engines.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(engines).toContainText('Deleted 1 engine.');
  await expect(engines.getByText(name, { exact: true })).toHaveCount(0);
  if (written) expect(fs.existsSync(written)).toBe(false);
});

test('two builds side by side: inputs that differ, phase rows aligned, the slower phases marked; history links to engine and manifest', async ({ studio }) => {
  const { page, models } = studio;
  await studio.openModel(models.small);
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  // Both manifests keep every phase row (the manifestRows option), so every row is lined up, not only the top level.
  await page.getByLabel('Every phase row in the manifest', { exact: true }).check();
  const compare = page.getByRole('region', { name: 'Compare' });
  const options = compare.getByLabel('Build a', { exact: true }).locator('option');
  const before = await options.count();
  for (const seconds of ['0.5', '2']) {
    await page.getByLabel('Duration (s)', { exact: true }).fill(seconds);
    await button(page, 'Build').click();
    await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 30_000 });
  }
  // Both of this test's builds listed (the history refreshes on its own time: on a busy machine
  // the second one came after the first look, and an earlier test's build was taken instead).
  await expect.poll(() => options.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(before + 2);
  const ids = (await options.allTextContents()).slice(1).map((t) => t.split(' · ')[0]);
  // Oldest first in the history: the last two are this test's, the 0.5 s build a, the 2 s build b.
  const [first, second] = ids.slice(-2);
  await compare.getByLabel('Build a', { exact: true }).selectOption(first);
  await compare.getByLabel('Build b', { exact: true }).selectOption(second);
  await compare.getByRole('button', { name: 'Compare', exact: true }).click();
  await expect(compare.getByRole('list', { name: 'Inputs that differ' })).toContainText('option simDuration: 0.5 → 2');
  const table = compare.getByRole('table', { name: 'Phase times' });
  await expect(table.locator('tbody tr').first()).toContainText('whole build');
  await expect(table.locator('tbody tr.slower').first()).toContainText('slower');
  // Nested rows are there too (their cell's title is the whole name path).
  await expect(table.locator('tbody td[title*=" › "]').first()).toBeVisible();
  await studio.shot('compare');
  if (studio.kind === 'web') {
    const history = page.getByRole('region', { name: 'History' });
    const link = history.getByRole('link', { name: 'manifest' }).first();
    const res = await page.request.get(new URL((await link.getAttribute('href'))!, page.url()).toString());
    expect(res.status()).toBe(200);
    const manifest = await res.json();
    expect(manifest.formatVersion).toBe(1);
    expect(manifest.build.rows.length).toBeGreaterThan(manifest.build.phases.length);
    // The engine link gives the very bytes the manifest describes.
    const engineHref = await history.getByRole('link', { name: 'engine' }).first().getAttribute('href');
    const engine = await (await page.request.get(new URL(engineHref!, page.url()).toString())).body();
    expect(engine.length).toBe(manifest.engine.bytes);
    expect(crypto.createHash('sha256').update(engine).digest('hex')).toBe(manifest.engine.sha256);
  }
});

test('"Reuse an up-to-date engine" is on for a new form; a second build of the same model and options is reused at once', async ({ studio }) => {
  const { page, models } = studio;
  await studio.openModel(models.small);
  const reuse = page.getByLabel('Reuse an up-to-date engine', { exact: true });
  // The fixture turned it off for builds that must run; a fresh form has it on.
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await reuse.check();
  await page.getByLabel('Seed', { exact: true }).fill('4242');
  await page.getByLabel('Duration (s)', { exact: true }).fill('1.5');
  await button(page, 'Build').click();
  await expect(page.getByRole('status')).toContainText('Succeeded', { timeout: 30_000 });
  await button(page, 'Build').click();
  const history = page.getByRole('region', { name: 'History' });
  await expect(history.locator('tbody tr').first()).toContainText('reused', { timeout: 30_000 });
  if (studio.kind === 'web') {
    const latest = await studio.latestBuild();
    expect(latest?.state).toBe('succeeded');
  }
});
