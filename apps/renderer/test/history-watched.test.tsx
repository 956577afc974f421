// @vitest-environment happy-dom
// A watched build (a user's own program under `watch`, docs/watch.md) is listed by its program,
// tagged with its pid, and its tooltip gives the command line and says the model is unknown
// rather than showing the record's label as if it were a model file.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildRecord } from '../../shared/protocol.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient } from './scripted-client.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };

const watched = (id: string, argv: string[], network?: { name: string; layers: number }): BuildRecord => ({
  id,
  state: 'running',
  modelPath: `${argv.join(' ')} (pid 4242)`,
  options: { backend: 'tensorrt' },
  queuedAt: '',
  lastSeq: 1,
  backend: 'tensorrt',
  engineAvailable: false,
  watched: { program: argv[0], pid: 4242, argv, probe: 'python-hook', api: 'Builder.build_serialized_network', ...(network ? { network } : {}) },
});

let mounted: MountedApp | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

describe('History shows watched builds by their program', () => {
  it('names, tags and explains them', async () => {
    const client = new ScriptedClient();
    client.builds = [
      watched('w1', ['/usr/bin/python3', '/home/u/build_engine.py', '--fp16'], { name: 'resnet', layers: 120 }),
      watched('w2', ['/opt/trt/bin/trtexec', '--onnx=m.onnx']),
    ];
    mounted = await mountApp(client, sched);
    await act(async () => mounted!.controller.refreshHistory());
    const panel = mounted.host.querySelector('section.history') as HTMLElement;
    const row = (id: string) => panel.querySelector(`tr[aria-label^="Build ${id}:"]`) as HTMLElement;
    expect(row('w1').querySelector('.name-cell')!.textContent).toContain('python3 build_engine.py');
    expect(row('w1').textContent).toContain('watched · pid 4242');
    const tip1 = row('w1').querySelector('td.path')!.getAttribute('title')!;
    expect(tip1).toBe('watched: /usr/bin/python3 /home/u/build_engine.py --fp16\npid 4242 · python-hook probe · Builder.build_serialized_network\nnetwork resnet, 120 layers');
    expect(row('w2').querySelector('.name-cell')!.textContent).toContain('trtexec');
    expect(row('w2').querySelector('td.path')!.getAttribute('title')).toContain('model unknown');
  });
});

describe('a watched build that starts while the page is open', () => {
  it('appears in the list by itself and is followed live when nothing else runs', async () => {
    const client = new ScriptedClient();
    mounted = await mountApp(client, sched);
    await act(async () => mounted!.controller.refreshHistory());
    const panel = mounted.host.querySelector('section.history') as HTMLElement;
    expect(panel.textContent).toContain('No builds in this session yet');
    client.builds = [watched('w7', ['python3', 'compile.py'])];
    const end = Date.now() + 10_000;
    while (!panel.querySelector('tr[aria-label^="Build w7:"]')) {
      if (Date.now() > end) throw new Error('the watched build never appeared');
      await act(async () => new Promise((r) => setTimeout(r, 100)));
    }
    await act(async () => new Promise((r) => setTimeout(r, 50)));
    expect(mounted.store.getState().live?.id).toBe('w7');
  });
});
