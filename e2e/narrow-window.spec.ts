// A small window (900×700) during a real (simulated) build: the phase tree gets the room (at least
// 14 rows in view), the first row in view sits whole below the column header, the side panels are
// tabs under the tree, and the log's long lines are not cut (they scroll sideways in the panel).
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

const ROW_H = 22;

/** Rows wholly inside the tree's viewport, and where the first of them sits against the header. */
async function treeGeometry(page: Page) {
  return page.evaluate(() => {
    const scroll = document.querySelector('.tree-scroll')!.getBoundingClientRect();
    const header = document.querySelector('.tree-cols')!.getBoundingClientRect();
    const rows = [...document.querySelectorAll('[role="treeitem"]')].map((e) => e.getBoundingClientRect());
    const inView = rows.filter((r) => r.top >= scroll.top - 0.5 && r.bottom <= scroll.bottom + 0.5).sort((a, b) => a.top - b.top);
    // Rows that are partly in view at the top (cut by the viewport's edge under the header).
    const cutAtTop = rows.filter((r) => r.top < scroll.top - 0.5 && r.bottom > scroll.top + 0.5).length;
    return { viewportH: scroll.height, inView: inView.length, total: rows.length, firstTop: inView[0]?.top, headerBottom: header.bottom, scrollTop: scroll.top, cutAtTop };
  });
}

test('at 900×700 a build shows at least 14 phase rows, the first one whole below the header', async ({ studio }) => {
  // The fourteenth row appears late in the simulated build; on a busy machine that takes a while.
  test.setTimeout(150_000);
  const { page, models } = studio;
  await page.setViewportSize({ width: 900, height: 700 });
  await studio.openModel(models.big);
  await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
  await page.getByLabel('Duration (s)', { exact: true }).fill('40');
  await page.getByRole('button', { name: 'Build', exact: true }).click();
  await expect(page.getByRole('status')).toContainText('Building');
  // The tree's viewport holds 14 rows or more...
  await expect.poll(async () => (await treeGeometry(page)).viewportH, { timeout: 20_000 }).toBeGreaterThanOrEqual(14 * ROW_H);
  // ...and once the build has that many rows, 14 are in view at once, still while building.
  await expect.poll(async () => (await treeGeometry(page)).total, { timeout: 90_000 }).toBeGreaterThanOrEqual(14);
  const g = await treeGeometry(page);
  // Still building when measured (the geometry above is of a running build).
  await expect(page.getByRole('status')).toContainText('Building');
  expect(g.inView).toBeGreaterThanOrEqual(14);
  expect(g.firstTop).toBeGreaterThanOrEqual(g.headerBottom - 0.5);
  expect(g.firstTop).toBeGreaterThanOrEqual(g.scrollTop - 0.5);
  expect(g.cutAtTop).toBe(0);
  await studio.shot('narrow-900x700-building');

  // The side panels are tabs under the tree; the log scrolls sideways rather than cutting a line.
  await expect(page.getByRole('tab', { name: 'Log' })).toHaveAttribute('aria-selected', 'true');
  const log = await page.evaluate(() => {
    const el = document.querySelector('.log-scroll')!;
    const cut = [...document.querySelectorAll('.lm')].filter((m) => (m as HTMLElement).scrollWidth > (m as HTMLElement).clientWidth + 1).length;
    return { scrollable: el.scrollWidth > el.clientWidth, cut };
  });
  expect(log.cut).toBe(0);
  expect(log.scrollable).toBe(true);
  await page.getByRole('tab', { name: 'Timeline' }).click();
  await expect(page.getByRole('img', { name: /Timeline of build phases/ })).toBeVisible();
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await expect(page.getByRole('status')).toContainText('Cancelled', { timeout: 40_000 });
});
