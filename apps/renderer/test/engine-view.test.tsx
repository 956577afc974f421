// @vitest-environment happy-dom
// The Engine view in the whole renderer (real store and controller, a scripted client): files read
// in the page, a virtualized table of 3,000 layers, the keyboard (arrows, End, Enter, Escape),
// sorting by a column header and filtering.
import { act } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FrameScheduler } from '../store/event-pump.js';
import { closeEngineView, engineViewStore, loadFiles } from '../lib/engine-view-state.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient } from './scripted-client.js';
import { generateEngineFiles } from '../../../test/support/engine-layer-files.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };
let mounted: MountedApp;
beforeEach(async () => {
  mounted = await mountApp(new ScriptedClient(), sched);
});
afterEach(() => {
  act(() => closeEngineView());
  engineViewStore.setState({ a: null, b: null, error: null, busy: false });
  mounted.unmount();
});

const q = <T extends Element = HTMLElement>(sel: string) => document.querySelector(sel) as T | null;
const rows = () => [...document.querySelectorAll('.engine-scroll [role="row"]')];
const names = () => rows().map((r) => r.querySelector('.lname-text')!.textContent);
const key = (k: string) => act(() => void q('.engine-scroll')!.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })));

describe('Engine view', () => {
  it('opens 3,000 layers from files with only a screenful in the page, and moves through them from the keyboard', async () => {
    const files = generateEngineFiles(3000);
    await act(async () => loadFiles([new File([files.layers], 'big.json'), new File([files.profile], 'big.profile.json')]));
    const dialog = q('[role="dialog"]')!;
    expect(dialog.getAttribute('aria-label') ?? dialog.querySelector('h2')!.textContent).toBe('Engine view');
    expect(q('.engine-count')!.textContent).toBe('3000 layers');
    expect(rows().length).toBeGreaterThan(5);
    expect(rows().length).toBeLessThan(60);
    expect(names()[0]).toBe('/backbone/stage0/conv_0 + /backbone/stage0/relu_0');

    // Down moves the active row; Enter opens it to its details; End goes to the last layer.
    key('ArrowDown');
    expect(q('.engine-scroll')!.getAttribute('aria-activedescendant')).toBe('layer-row-1');
    key('Enter');
    expect(q('[role="note"]')!.textContent).toMatch(/Fused operations.*Inputs.*t_0 \(fp16\)/);
    key('ArrowLeft');
    expect(q('[role="note"]')).toBeNull();
    key('End');
    expect(q('.engine-scroll')!.getAttribute('aria-activedescendant')).toBe('layer-row-2999');

    // Sorted by time, slowest first; then engine order again on the third click.
    const timeButton = [...document.querySelectorAll('button.sort')].find((b) => b.textContent!.startsWith('Time ms')) as HTMLButtonElement;
    act(() => timeButton.click());
    const times = rows().map((r) => Number(r.querySelectorAll('[role="gridcell"]')[3]!.textContent));
    expect(times.slice(0, 10)).toEqual([...times.slice(0, 10)].sort((a, b) => b - a));
    act(() => timeButton.click());
    act(() => timeButton.click());
    expect(names()[0]).toBe('/backbone/stage0/conv_0 + /backbone/stage0/relu_0');

    // Filtered by precision: only FP32 rows; the count says how many of all.
    const select = q<HTMLSelectElement>('select[aria-label="Filter by precision"]')!;
    act(() => {
      select.value = 'fp32';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(q('.engine-count')!.textContent).toMatch(/^\d+ of 3000 layers$/);
    for (const r of rows()) expect(r.querySelector('.prec')!.textContent).toBe('fp32');

    // Escape closes the view.
    act(() => void dialog.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
    expect(q('[role="dialog"]')).toBeNull();
  });

  it('a bad file is one line naming it', async () => {
    await act(async () => loadFiles([new File(['{"Layers": ['], 'broken.json')]));
    expect(q('[role="alert"]')!.textContent).toMatch(/^broken\.json: /);
  });
});
