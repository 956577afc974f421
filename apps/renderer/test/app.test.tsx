// @vitest-environment happy-dom
// The real components and store, in a DOM, driven by a scripted client: what the tree shows,
// how following behaves, and what the status line says through a build and a Stop.
import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { App } from '../App.js';
import { AppContext } from '../hooks.js';
import { createAppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

let frames: ((t: number) => void)[] = [];
const sched: FrameScheduler = { request: (cb) => frames.push(cb), now: () => performance.now(), hidden: () => false };
const runFrame = () =>
  act(() => {
    const q = frames;
    frames = [];
    for (const cb of q) cb(performance.now());
  });
/** Frames until the pump has nothing left: a big backlog is applied over several (time budget). */
const runFramesUntilIdle = () => {
  for (let i = 0; i < 1000 && frames.length > 0; i++) runFrame();
  expect(frames).toEqual([]);
};

let host: HTMLElement;
let client: ScriptedClient;

let mounted: MountedApp;
beforeEach(async () => {
  client = new ScriptedClient();
  mounted = await mountApp(client, sched);
  ({ host } = mounted);
});

afterEach(() => mounted.unmount());

const byText = (text: string) => [...host.querySelectorAll('button')].find((b) => b.textContent === text)!;
const status = () => host.querySelector('[role="status"]')!.textContent ?? '';
const treeitems = () => [...host.querySelectorAll('[role="treeitem"]')].map((e) => e.getAttribute('aria-label') ?? '');

async function openAndBuild() {
  await act(async () => byText('Open model…').click());
  await act(async () => byText('Build').click());
}

describe('App', () => {
  it('shows the model summary and names the toolbar buttons exactly', async () => {
    expect(['Open model…', 'Build', 'Stop', 'Save engine…'].map((n) => !!byText(n))).toEqual([true, true, true, true]);
    expect(status()).toContain('Idle');
    await act(async () => byText('Open model…').click());
    expect(host.textContent).toContain('tiny.onnx');
    expect(host.textContent).toContain('Conv');
    expect(byText('Build').disabled).toBe(false);
  });

  it('shows a bad model error as the service words it', async () => {
    client.nextModel = new Error('bad.onnx is not an ONNX model: truncated protobuf');
    await act(async () => byText('Open model…').click());
    expect(host.querySelector('[role="alert"]')!.textContent).toBe('bad.onnx is not an ONNX model: truncated protobuf');
  });

  it('grows the tree once per frame, groups instances, marks early finishes', async () => {
    await openAndBuild();
    expect(client.started[0].options.backend).toBe('auto');
    expect(status()).toContain('Building');
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 6);
    const nodes = w.start('Timing graph nodes', root, 12);
    for (let i = 0; i < 50; i++) w.full('Measuring tactic time', nodes, 4);
    const opt = w.start('Optimizing graph', root, 33);
    for (let s = 0; s < 28; s++) w.step(opt, s);
    w.finish(opt, 28, true);
    w.step(nodes, 6);
    act(() => client.push('b1', w.events));
    expect(treeitems()).toEqual([]); // nothing rendered before the frame
    runFrame();
    const items = treeitems();
    expect(items[0]).toMatch(/^Building engine 0\/6/);
    expect(items.find((l) => l.startsWith('Timing graph nodes'))).toMatch(/^Timing graph nodes 7\/12.*running/);
    expect(items.find((l) => l.startsWith('Measuring tactic time'))).toMatch(/50 instances/);
    expect(items.find((l) => l.startsWith('Optimizing graph'))).toBe('Optimizing graph 28/33, finished early, done');
    expect(host.textContent).toContain('Simulated');
  });

  it('shows a finished build as finished: a summary, full bars, early ends as a quiet mark with a legend', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 6);
    const opt = w.start('Optimizing graph', root, 33);
    for (let s = 0; s < 28; s++) w.step(opt, s);
    w.finish(opt, 28, true);
    for (let s = 0; s < 4; s++) w.step(root, s);
    w.finish(root, 4, true);
    const out = '/home/me/trt-build-studio/engines/a-rather-long-model-name_v2.sim.10.16.0.engine';
    w.finished('succeeded', { engineBytes: 2 * 1024 * 1024, outputPath: out });
    act(() => client.push('b1', w.events));
    runFramesUntilIdle();
    const summaryEl = host.querySelector('[aria-label="Build summary"]');
    expect(summaryEl?.textContent).toMatch(/^Succeeded in /);
    expect(summaryEl?.textContent).toContain('engine 2.00 MiB');
    // One size format, the exact bytes on hover; the engine's path with Copy (Show in folder only
    // where the host can open a folder: not this scripted web-like client).
    expect(summaryEl!.querySelector('.summary-fact[title]')!.getAttribute('title')).toBe('2,097,152 bytes');
    const pathEl = summaryEl!.querySelector('[aria-label="Engine file"]')!;
    expect(pathEl.querySelector('.path-text')!.textContent).toBe(out);
    expect(pathEl.querySelector('.path-text')!.getAttribute('title')).toBe(out);
    expect([...pathEl.querySelectorAll('button')].map((b) => b.textContent)).toEqual(['Copy path']);
    const fills = [...host.querySelectorAll('[role="treeitem"] .fill')].map((e) => (e as HTMLElement).style.width);
    expect(fills).toEqual(['100.0%', '100.0%']);
    // No alarm colour, no flag: a muted mark explained once in the panel head.
    expect(host.querySelector('.fill.early')).toBeNull();
    expect(host.textContent).not.toContain('⚑');
    expect(host.querySelector('.legend')?.textContent).toContain('ended early (routine)');
    // Finished reads finished: every closed row shows a check and its elapsed time; no visible
    // step text is a count short of its total ("4/6").
    const rows = [...host.querySelectorAll('[role="treeitem"]')];
    for (const r of rows) {
      const steps = r.querySelector('.steps')!.textContent!;
      expect(steps).toMatch(/^✓ \d+/);
      expect(steps).not.toMatch(/\d+\/\d+/);
      expect(r.querySelector('.elapsed')!.textContent).toMatch(/\d+ ms|s$/);
    }
    // The early mark explains itself on hover, with the figures.
    const early = rows.find((r) => r.getAttribute('aria-label')!.startsWith('Building engine'))!;
    expect(early.querySelector('.steps')!.getAttribute('title')).toMatch(/^ended after step 4 of 6 planned\. TensorRT routinely ends a phase/);
    expect(early.querySelector('.steps')!.textContent).toBe('✓ 4◂');
    expect(host.querySelector('.legend [title]')!.getAttribute('title')).toMatch(/not an error/);
  });

  it('a crashed build: the tree holds the phase it died in, the log has the crash line, the status bar the short form with the full text a click away', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 6);
    const clone = w.start('Cloning network graph', root, 1516);
    for (let s = 0; s < 20; s++) w.step(clone, s);
    const error =
      'the build worker crashed in Building engine › Preparing graph for optimization: it exited without a result (signal SIGSEGV); last output: Segmentation fault (core dumped)';
    w.finished('crashed', { error, lastPhasePath: ['Building engine', 'Preparing graph for optimization'] });
    act(() => client.push('b1', w.events));
    runFramesUntilIdle();
    const items = treeitems();
    expect(items).toContain('Preparing graph for optimization, crash site: the worker died here before its start reached this view');
    expect(host.querySelector('.trow.crash-last .crash-tag')?.textContent).toBe('✕ crash site');
    // Cut short where it stopped: the count stays visible.
    const cloneRow = [...host.querySelectorAll('[role="treeitem"]')].find((r) => r.getAttribute('aria-label')!.startsWith('Cloning network graph'))!;
    expect(cloneRow.querySelector('.steps')!.textContent).toBe('20/1516■');
    // The log's last line is the crash, in full.
    const logText = host.querySelector('[role="log"]')!.textContent!;
    expect(logText).toContain(`Build crashed: ${error}`);
    // The status bar: the short form, the full text one click away.
    const detail = host.querySelector('.statusbar .detail') as HTMLButtonElement;
    expect(detail.textContent).toBe('crashed in Preparing graph for optimization (signal SIGSEGV)');
    expect(host.querySelector('.status-full')).toBeNull();
    await act(async () => detail.click());
    expect(host.querySelector('.status-full')!.textContent).toContain(error);
    await act(async () => detail.click());
    expect(host.querySelector('.status-full')).toBeNull();
  });

  it('shows the overall percentage in the status line and the window title, 100 only once the engine is written', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 4);
    w.step(root, 0);
    w.step(root, 1);
    act(() => client.push('b1', w.events));
    runFramesUntilIdle();
    expect(status()).toMatch(/^Building50%elapsed /);
    expect(document.title).toBe('50% · Building · tiny.onnx — TRT Build Studio');
    w.step(root, 2);
    w.step(root, 3);
    w.finish(root, 4);
    act(() => client.push('b1', w.events.slice(-3)));
    runFramesUntilIdle();
    // All steps reported but no engine yet: 99, never 100.
    expect(status()).toMatch(/^Building99%/);
    w.finished('succeeded', { engineBytes: 1000 });
    act(() => client.push('b1', w.events.slice(-1)));
    runFramesUntilIdle();
    expect(status()).not.toContain('%');
    expect(document.title).toBe('Succeeded · tiny.onnx — TRT Build Studio');
    expect(status()).toContain('engine 1000 B');
    expect(host.querySelector('.statusbar .detail')!.getAttribute('title')).toBe('1,000 bytes');
  });

  it('says the percentage rests on typical phase weights when no earlier build left any (prior), not when history did', async () => {
    const cases = [
      ['prior', true],
      ['history', false],
      ['mixed', false],
    ] as const;
    for (const [i, [phaseSharesSource, shown]] of cases.entries()) {
      await openAndBuild();
      const id = `b${i + 1}`; // the scripted client numbers builds in order
      const w = new StreamWriter(id);
      w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, phaseShares: { 'Building engine@0/4': 0.25 }, phaseSharesSource });
      const root = w.start('Building engine', null, 4);
      w.step(root, 0);
      w.step(root, 1);
      act(() => client.push(id, w.events));
      runFramesUntilIdle();
      expect(status(), phaseSharesSource).toMatch(/^Building\d+%/);
      expect(status().includes('(typical phase weights)'), phaseSharesSource).toBe(shown);
      const part = [...host.querySelectorAll('.statusbar .part')].find((p) => /^\d+%/.test(p.textContent ?? ''))!;
      expect(part.getAttribute('title')!.includes('typical TensorRT builds'), phaseSharesSource).toBe(shown);
      // The window title keeps the bare percentage.
      expect(document.title).toMatch(/^\d+% · Building · tiny\.onnx/);
      w.finished('succeeded', { engineBytes: 1000 });
      act(() => client.push(id, w.events.slice(-1)));
      runFramesUntilIdle();
      expect(status()).not.toContain('typical phase weights');
    }
  });

  it('keeps the fraction of phases that a cancelled build cut short', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 4);
    w.step(root, 0);
    w.finish(root, 1, true);
    w.finished('cancelled', { cancelLatencyMs: 0.4, stopToFinishMs: 12 });
    act(() => client.push('b1', w.events));
    runFramesUntilIdle();
    expect(host.querySelector('[aria-label="Build summary"]')?.textContent).toMatch(/^Cancelled after .*no engine written.*builder stopped < 1 ms after Stop.*unwound in 12 ms/);
    expect((host.querySelector('[role="treeitem"] .fill') as HTMLElement).style.width).toBe('25.0%');
    // Cancelled keeps the count where it stopped, visibly, with its mark and legend.
    expect(host.querySelector('[role="treeitem"] .steps')!.textContent).toBe('1/4■');
    expect(host.querySelector('.legend')!.textContent).toContain('■ stopped');
  });

  it('renders only the rows in view, however many distinct phases the build reports', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 1);
    // Older TensorRT names phases after layers: every one is a distinct row.
    for (let i = 0; i < 5000; i++) w.full(`Finding fastest tactic for conv_${i}`, root, 1);
    act(() => client.push('b1', w.events));
    runFramesUntilIdle();
    const tree = host.querySelector('[role="tree"]') as HTMLElement;
    expect(tree.style.height).toBe(`${5001 * 22}px`);
    expect(treeitems().length).toBeGreaterThan(0);
    expect(treeitems().length).toBeLessThan(100);
  });

  it('follows the active phase until the user scrolls, then offers Follow again', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const root = w.start('Building engine', null, 6);
    const sub = w.start('Building engine from subgraph', root, 1);
    w.start('Computing profile costs', sub, 10);
    act(() => client.push('b1', w.events));
    runFrame();
    const follow = byText('Follow');
    expect(follow.getAttribute('aria-pressed')).toBe('true');
    const active = [...host.querySelectorAll('.trow.active')].map((e) => e.getAttribute('aria-label'));
    expect(active.map((l) => l!.split(' 0/')[0])).toEqual(['Building engine', 'Building engine from subgraph', 'Computing profile costs']);
    act(() => {
      host.querySelector('.tree-scroll')!.dispatchEvent(new WheelEvent('wheel', { bubbles: true, deltaY: 40 }));
    });
    expect(byText('Follow').getAttribute('aria-pressed')).toBe('false');
    act(() => byText('Follow').click());
    expect(byText('Follow').getAttribute('aria-pressed')).toBe('true');
    // Collapsing something also stops following.
    const tree = host.querySelector('[role="tree"]') as HTMLElement;
    act(() => tree.dispatchEvent(new KeyboardEvent('keydown', { key: 'Home', bubbles: true })));
    act(() => tree.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true })));
    expect(byText('Follow').getAttribute('aria-pressed')).toBe('false');
    expect(treeitems()).toEqual([expect.stringMatching(/^Building engine/)]);
    act(() => tree.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true })));
    // Re-expanding shows the path as the follow mode had opened it.
    expect(treeitems().map((l) => l.split(' 0/')[0])).toEqual(['Building engine', 'Building engine from subgraph', 'Computing profile costs']);
  });

  it('says Stopping with the step-boundary wording, then Cancelled with the measured latency', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    const p = w.start('Building engine', null, 6);
    act(() => client.push('b1', w.events));
    runFrame();
    await act(async () => byText('Stop').click());
    expect(client.cancelled).toEqual(['b1']);
    expect(status()).toContain('Stopping — waiting for the builder to reach a step boundary…');
    const n = w.events.length;
    w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'user' });
    w.finish(p, 1, true);
    w.finished('cancelled', { cancelLatencyMs: 3.2, stopToFinishMs: 45 });
    act(() => client.push('b1', w.events.slice(n)));
    runFrame();
    expect(status()).toContain('Cancelled');
    expect(status()).not.toContain('Stopping');
    expect(status()).toMatch(/builder stopped 3 ms after Stop, unwound in 45 ms/);
    expect(byText('Save engine…').disabled).toBe(true);
    expect(byText('Build').disabled).toBe(false);
  });

  it('a second Stop while stopping asks to kill the worker, and then Stop is spent', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    w.start('Building engine', null, 6);
    act(() => client.push('b1', w.events));
    runFrame();
    await act(async () => byText('Stop').click());
    expect(byText('Stop').disabled).toBe(false);
    await act(async () => byText('Stop').click());
    expect(client.cancelled).toEqual(['b1', 'b1']);
    expect(status()).toContain('Stopping — ending the build worker…');
    expect(byText('Stop').disabled).toBe(true);
  });

  it('filters the log by severity and text, and shows cache figures with inferred misses labelled', async () => {
    await openAndBuild();
    const w = new StreamWriter('b1');
    w.started();
    w.emit({ type: 'log', severity: 'verbose', message: 'Autotuning op conv1' });
    w.emit({ type: 'log', severity: 'info', message: 'Loaded timing cache' });
    w.emit({ type: 'log', severity: 'warning', message: 'Timing cache mismatch ignored' });
    w.emit({ type: 'cache.stats', entriesBefore: 12, entriesAfter: 40, added: 28, bytes: 4096, misses: 28, missesInferred: true, path: '/c/t.cache' });
    act(() => client.push('b1', w.events));
    runFrame();
    const logText = () => host.querySelector('[role="log"]')!.textContent ?? '';
    expect(logText()).toContain('Loaded timing cache');
    expect(logText()).not.toContain('Autotuning'); // verbose hidden by default
    const sev = host.querySelector('select[aria-label="Minimum severity"]') as HTMLSelectElement;
    act(() => {
      sev.value = 'verbose';
      sev.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(logText()).toContain('Autotuning op conv1');
    const search = host.querySelector('input[aria-label="Search the log"]') as HTMLInputElement;
    act(() => {
      const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
      set.call(search, 'MISMATCH');
      search.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(logText()).toContain('Timing cache mismatch ignored');
    expect(logText()).not.toContain('Loaded timing cache');
    const cache = host.querySelector('[aria-label="Timing cache"]')!.textContent ?? '';
    expect(cache).toContain('Entries before12');
    expect(cache).toContain('Added28');
    expect(cache).toContain('Hitsunknown');
    expect(cache).toMatch(/Misses28\s*inferred/);
    expect(cache).toContain('/c/t.cache');
  });

  it('copies the options as a trtexec command', async () => {
    await act(async () => byText('Open model…').click());
    await act(async () => byText('Copy as trtexec command').click());
    expect(host.querySelector('pre[aria-label="trtexec command"]')!.textContent).toBe(
      'trtexec --onnx=tiny.onnx --saveEngine=tiny.sim.sim-1.engine --builderOptimizationLevel=3 --skipInference',
    );
  });

  it('runs the page shortcuts: Ctrl+O opens, Ctrl+B builds, Esc leaves the build running, Ctrl+. stops', async () => {
    await act(async () => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'o', ctrlKey: true })));
    expect(host.textContent).toContain('tiny.onnx');
    await act(async () => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'b', ctrlKey: true })));
    expect(client.started).toHaveLength(1);
    await act(async () => window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' })));
    expect(client.cancelled).toEqual([]);
    await act(async () => window.dispatchEvent(new KeyboardEvent('keydown', { key: '.', ctrlKey: true })));
    expect(client.cancelled).toEqual(['b1']);
  });

  it('after a reload, picks up the running build and its model', async () => {
    const store = createAppStore();
    const c2 = new ScriptedClient();
    c2.builds = [
      { id: 'old', state: 'succeeded', modelPath: '/srv/a.onnx', options: { backend: 'auto' }, queuedAt: '', lastSeq: 5, phases: [], engineAvailable: true },
      { id: 'run', state: 'running', modelPath: '/srv/tiny.onnx', model: summary, options: { backend: 'auto' }, queuedAt: '', lastSeq: 1, phases: [], engineAvailable: false },
    ];
    const ctl = new Controller(store, c2, sched);
    await ctl.init();
    expect(store.getState().live?.id).toBe('run');
    expect(store.getState().model?.path).toBe('/srv/tiny.onnx');
    expect(c2.subs.has('run')).toBe(true);
    ctl.dispose();
  });

  it('offers the host’s recent models (Electron) and opens the one picked', async () => {
    const c2 = new ScriptedClient();
    const opened: string[] = [];
    Object.assign(c2, {
      recentModels: async () => ['/models/a.onnx', '/models/b.onnx'],
      openModelPath: async (p: string) => {
        opened.push(p);
        return { path: p, displayName: 'b.onnx', summary };
      },
    });
    const store = createAppStore();
    const ctl = new Controller(store, c2, sched);
    const el = document.createElement('div');
    document.body.appendChild(el);
    const r = createRoot(el);
    await act(async () => {
      r.render(
        <AppContext.Provider value={{ store, controller: ctl }}>
          <App />
        </AppContext.Provider>,
      );
    });
    const select = el.querySelector('select[aria-label="Recent models"]') as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual(['Recent…', 'a.onnx', 'b.onnx']);
    await act(async () => {
      select.value = '/models/b.onnx';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(opened).toEqual(['/models/b.onnx']);
    expect(store.getState().model?.displayName).toBe('b.onnx');
    act(() => r.unmount());
    el.remove();
    ctl.dispose();
  });

  it('runs a host menu action once even when the same key also reached the page', async () => {
    // Stop is where it matters: a second Stop escalates to killing the worker.
    const c2 = new ScriptedClient();
    let fire: ((a: 'open' | 'build' | 'stop' | 'save') => void) | undefined;
    Object.assign(c2, {
      onHostAction: (cb: typeof fire) => {
        fire = cb;
        return () => undefined;
      },
    });
    const store = createAppStore();
    const ctl = new Controller(store, c2, sched);
    const el = document.createElement('div');
    document.body.appendChild(el);
    const r = createRoot(el);
    await act(async () => {
      r.render(
        <AppContext.Provider value={{ store, controller: ctl }}>
          <App />
        </AppContext.Provider>,
      );
    });
    await act(async () => {
      await ctl.openModel();
      await ctl.build();
    });
    await act(async () => {
      window.dispatchEvent(new KeyboardEvent('keydown', { key: '.', ctrlKey: true }));
      fire!('stop');
    });
    expect(c2.cancelled).toEqual(['b1']);
    act(() => r.unmount());
    el.remove();
    ctl.dispose();
  });
});
