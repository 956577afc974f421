// @vitest-environment happy-dom
// Shapes as people type them (issue 37 item 3): one field per dynamic input that takes
// "1x3x640x640" or min:opt:max, kept in step with the per-dimension boxes behind it both ways, its
// mistakes named under it; and a refused model as a first line, a list one opens, and a status
// line that says "Model refused" (item 5). Real App, store and controller in a DOM.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelSummary } from '../../shared/protocol.js';
import { parseShapeText, shapePlaceholder, shapeText } from '../lib/shape-text.js';
import { modelErrorParts, pageStatus } from '../lib/model-error.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };

const LONG_DIM = 'p2o.DynamicDimension.0';
const dynamicModel: ModelSummary = {
  ...summary,
  fileName: 'yolo.onnx',
  inputs: [{ name: 'images', elemType: 'float32', shape: [LONG_DIM, 3, 'height', 'width'] }],
  dynamicInputs: [{ name: 'images', dims: [LONG_DIM, 'height', 'width'] }],
};

let mounted: MountedApp | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function openModel(client: ScriptedClient): Promise<HTMLElement> {
  mounted = await mountApp(client, sched);
  const open = [...mounted.host.querySelectorAll('button')].find((b) => b.textContent === 'Open model…')!;
  await act(async () => open.click());
  return mounted.host;
}

async function openDynamic(): Promise<HTMLElement> {
  const client = new ScriptedClient();
  client.nextModel = { path: '/srv/yolo.onnx', displayName: 'yolo.onnx', summary: dynamicModel };
  return openModel(client);
}

const input = (host: HTMLElement, label: string) => {
  const el = host.querySelector(`input[aria-label="${label}"]`) as HTMLInputElement | null;
  if (!el) throw new Error(`no field "${label}"`);
  return el;
};
function type(el: HTMLInputElement, value: string) {
  act(() => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
}
const shapes = () => mounted!.store.getState().form.shapes.images;
const errorText = (host: HTMLElement) => host.querySelector('.shape-input .field-error')?.textContent ?? null;
const box = (host: HTMLElement, dim: string, w: string) => input(host, `images ${dim} ${w}`);

describe('the shape field', () => {
  it('starts empty, saying what an empty field builds', async () => {
    const host = await openDynamic();
    const field = input(host, 'images shape');
    expect(field.value).toBe('');
    expect(field.placeholder).toBe('?x3x?x? → built as 1x3x1x1 if left empty');
    expect(errorText(host)).toBeNull();
    // The per-dimension boxes are behind a disclosure, still there.
    const details = host.querySelector('.shape-input details.per-dim') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')!.textContent).toBe('per dimension');
  });

  it('one shape sets min = opt = max, and the boxes show it', async () => {
    const host = await openDynamic();
    type(input(host, 'images shape'), '1x3x640x640');
    expect(shapes()).toEqual({ min: '1x3x640x640', opt: '1x3x640x640', max: '1x3x640x640' });
    for (const w of ['min', 'opt', 'max']) {
      expect(box(host, LONG_DIM, w).value).toBe('1');
      expect(box(host, 'height', w).value).toBe('640');
    }
    expect(errorText(host)).toBeNull();
  });

  it('min:opt:max (and min/opt/max, as --shapes writes it) set the three shapes', async () => {
    const host = await openDynamic();
    type(input(host, 'images shape'), '1x3x640x640:8x3x640x640:16x3x640x640');
    expect(shapes()).toEqual({ min: '1x3x640x640', opt: '8x3x640x640', max: '16x3x640x640' });
    expect(box(host, LONG_DIM, 'opt').value).toBe('8');
    expect(box(host, LONG_DIM, 'max').value).toBe('16');
    type(input(host, 'images shape'), '2x3x320x320/4x3x320x320/8x3x320x320');
    expect(shapes()).toEqual({ min: '2x3x320x320', opt: '4x3x320x320', max: '8x3x320x320' });
    expect(errorText(host)).toBeNull();
  });

  it('a box typed into rewrites the field; the field typed into rewrites the boxes', async () => {
    const host = await openDynamic();
    type(input(host, 'images shape'), '1x3x640x640');
    type(box(host, LONG_DIM, 'max'), '16');
    expect(input(host, 'images shape').value).toBe('1x3x640x640:1x3x640x640:16x3x640x640');
    type(box(host, 'width', 'min'), '');
    expect(input(host, 'images shape').value).toBe('1x3x640x?:1x3x640x640:16x3x640x640');
    expect(errorText(host)).toBe(`Input "images": min of dimension 3 (width) is empty.`);
    type(input(host, 'images shape'), '4x3x?x?');
    expect(box(host, LONG_DIM, 'min').value).toBe('4');
    expect(box(host, 'height', 'min').value).toBe('');
  });

  it('names what is wrong under the field, and Build is refused meanwhile', async () => {
    const host = await openDynamic();
    const field = input(host, 'images shape');
    const build = () => [...host.querySelectorAll('button')].find((b) => b.textContent === 'Build')!;
    const cases: [string, string][] = [
      ['1x3x640x640:8x3x640x640', 'Input "images": give one shape (e.g. 1x3x1x1) or three as min:opt:max; "1x3x640x640:8x3x640x640" has 2 parts.'],
      ['1x3x640', 'Input "images": min shape has 3 dimensions, the model declares 4.'],
      ['1x4x640x640', 'Input "images": min dimension 1 is 4, but the model fixes it at 3.'],
      ['1x3x640xabc', 'Input "images": min shape "1x3x640xabc" must be positive whole numbers joined by "x".'],
      ['8x3x64x64:1x3x64x64:16x3x64x64', `Input "images": dimension 0 must satisfy min ≤ opt ≤ max (got 8, 1, 16).`],
    ];
    for (const [text, error] of cases) {
      type(field, text);
      // The text stays as typed (not rewritten under the cursor)...
      expect(input(host, 'images shape').value).toBe(text);
      // ...and says what is wrong, tied to the field.
      expect(errorText(host), text).toBe(error);
      expect(input(host, 'images shape').getAttribute('aria-invalid')).toBe('true');
      expect(build().disabled, text).toBe(true);
      // The same words beside Build as under the field.
      expect(host.querySelector('#build-blocker')!.textContent, text).toBe(error);
    }
    type(field, '');
    expect(errorText(host)).toBeNull();
    expect(build().disabled).toBe(false);
  });

  it('a long symbolic name is whole in the row header and on hover', async () => {
    const host = await openDynamic();
    const th = [...host.querySelectorAll('.dims tbody th')].find((t) => t.textContent === LONG_DIM) as HTMLElement;
    expect(th).toBeDefined();
    expect(th.title).toBe(`${LONG_DIM}: dimension 0 of images`);
    expect(th.querySelector('.sep-name')!.getAttribute('title')).toBe(LONG_DIM);
  });
});

describe('shape text helpers', () => {
  const T = 'x3xx';
  it('round-trips the form and the field', () => {
    for (const text of ['1x3x640x640', '1x3x640x640:8x3x640x640:16x3x640x640', '1x3x?x?', '?x3x64x64:1x3x64x64:2x3x64x64']) {
      expect(shapeText(parseShapeText(text, T), T)).toBe(text);
    }
    expect(shapeText({ min: T, opt: T, max: T }, T)).toBe('');
    expect(parseShapeText('  ', T)).toEqual({ min: T, opt: T, max: T });
    expect(parseShapeText('1 × 3 × 8 × 8', T).min).toBe('1x3x8x8');
  });
  it('keeps a text of the wrong number of parts whole, so the form refuses it naming the count', () => {
    const t = '1x3x8x8:1x3x8x8:1x3x8x8:1x3x8x8';
    expect(parseShapeText(t, T)).toEqual({ min: t, opt: t, max: t });
    expect(shapeText(parseShapeText(t, T), T)).toBe(t);
  });
  it('placeholders', () => {
    expect(shapePlaceholder('x3x224x224')).toBe('?x3x224x224 → built as 1x3x224x224 if left empty');
    expect(shapePlaceholder('')).toBe('e.g. 1x3x640x640, or min:opt:max');
  });
});

describe('a refused model', () => {
  const REFUSAL = [
    '/srv/broken.onnx is not a valid ONNX model for TensorRT: 12 problems (the first 10 listed)',
    ...Array.from({ length: 10 }, (_, i) => `  ${i + 1}. node "conv_${i}" #${i} (Conv) reads "x_${i}_missing", which no node produces`),
    '  … and 2 more problems',
  ].join('\n');

  it('shows the first line as the alert and the problems as a list one opens; the status line says Model refused', async () => {
    const client = new ScriptedClient();
    client.nextModel = new Error(REFUSAL);
    const host = await openModel(client);
    const alert = host.querySelector('.model-panel [role="alert"]')!;
    expect(alert.textContent).toBe('/srv/broken.onnx is not a valid ONNX model for TensorRT: 12 problems (the first 10 listed)');
    const details = host.querySelector('.model-panel details.model-problems') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')!.textContent).toBe('The 10 problems listed');
    const items = [...details.querySelectorAll('li')].map((l) => l.textContent);
    expect(items).toHaveLength(10);
    expect(items[0]).toBe('node "conv_0" #0 (Conv) reads "x_0_missing", which no node produces');
    expect(host.querySelector('.model-panel .model-error > p.hint')!.textContent).toBe('… and 2 more problems');
    const status = host.querySelector('[role="status"]')!;
    expect(status.querySelector('.state')!.textContent).toBe('Model refused');
    expect(status.textContent).toContain('12 problems');
    expect(document.title).toMatch(/^Model refused/);
  });

  it('a one-line error has no list; the status line says Idle again once a model opens', async () => {
    const client = new ScriptedClient();
    client.nextModel = new Error('/srv/x.onnx: no such file');
    const host = await openModel(client);
    expect(host.querySelector('.model-panel [role="alert"]')!.textContent).toBe('/srv/x.onnx: no such file');
    expect(host.querySelector('.model-panel details')).toBeNull();
    expect(host.querySelector('[role="status"] .state')!.textContent).toBe('Model refused');
    client.nextModel = { path: '/srv/tiny.onnx', displayName: 'tiny.onnx', summary };
    const open = [...host.querySelectorAll('button')].find((b) => b.textContent === 'Open model…')!;
    await act(async () => open.click());
    expect(host.querySelector('.model-panel [role="alert"]')).toBeNull();
    expect(host.querySelector('[role="status"] .state')!.textContent).toBe('Idle');
  });

  it('pageStatus: only an idle page shows the refusal; a build on screen keeps its own status', () => {
    expect(pageStatus('Idle', 'x is not a valid ONNX model')).toBe('Model refused');
    expect(pageStatus('Idle', null)).toBe('Idle');
    expect(pageStatus('Succeeded', 'x is not a valid ONNX model')).toBe('Succeeded');
    expect(modelErrorParts('a\n  1. b\n  2. c')).toEqual({ head: 'a', problems: ['b', 'c'], notes: [] });
    // As the HTTP error body carries it (control characters escaped): the same parts; an escaped
    // break inside a name (not followed by a list line) stays text.
    expect(modelErrorParts('a: 3 problems\\n  1. b "x\\ny"\\n  2. c\\n  … and 1 more problem')).toEqual({
      head: 'a: 3 problems',
      problems: ['b "x\\ny"', 'c'],
      notes: ['… and 1 more problem'],
    });
  });
});
