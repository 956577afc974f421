// @vitest-environment happy-dom
// The build farm panel: shown on a farm serve (the client's farmStatus answers), hidden on a serve
// that builds locally (farmStatus answers null) and where the host offers no farm view at all.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { FarmStatus } from '../../shared/farm-status.js';
import { FarmPanel } from '../components/FarmPanel.js';
import { AppContext } from '../hooks.js';
import { createAppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { ScriptedClient } from './scripted-client.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
const sched: FrameScheduler = { request: (cb) => void setTimeout(() => cb(performance.now()), 0), now: () => performance.now(), hidden: () => false };
let root: Root | undefined;
let host: HTMLElement | undefined;
let controller: Controller | undefined;

afterEach(() => {
  if (root) act(() => root!.unmount());
  controller?.dispose();
  host?.remove();
  root = host = controller = undefined;
});

async function renderWith(client: ScriptedClient): Promise<HTMLElement> {
  host = document.createElement('div');
  document.body.appendChild(host);
  const store = createAppStore();
  controller = new Controller(store, client, sched);
  root = createRoot(host);
  await act(async () => {
    root!.render(
      <AppContext.Provider value={{ store, controller: controller! }}>
        <FarmPanel />
      </AppContext.Provider>,
    );
    await new Promise((r) => setTimeout(r, 10));
  });
  return host;
}

const status: FarmStatus = {
  at: '2026-12-01T20:00:00.000Z',
  workers: [
    { id: 'node1-gpu0', host: 'node1', pid: 11, labels: { gpu: 'L4', device: '0' }, slots: 1, running: ['f7-aa'], lastHeartbeatMsAgo: 1200 },
    { id: 'node1-gpu1', host: 'node1', pid: 11, labels: { gpu: 'L4', device: '1' }, slots: 1, running: [], lastHeartbeatMsAgo: 300 },
  ],
  pools: [{ target: { gpu: 'H100' }, queued: [{ id: 'f8-bb', queuedAt: '2026-12-01T19:59:00.000Z', waiting: 'no live worker matches target gpu=H100' }] }],
  running: [{ id: 'f7-aa', worker: 'node1-gpu0', target: { gpu: 'L4' }, attempt: 1 }],
  recent: [{ id: 'f6-cc', state: 'succeeded', worker: 'node1-gpu1' }],
};

describe('build farm panel', () => {
  it('shows workers with their labels, busy slots and heartbeat, queued builds with why they wait, recent endings', async () => {
    const client = new ScriptedClient() as ScriptedClient & { farmStatus(): Promise<FarmStatus | null> };
    client.farmStatus = async () => status;
    const el = await renderWith(client);
    const panel = el.querySelector('section.farm')!;
    expect(panel.textContent).toContain('2 workers · 1 of 2 slots busy · 1 queued');
    expect(el.querySelector('[aria-label="Workers"]')!.textContent).toContain('node1-gpu0 gpu=L4, device=0 1/1 busy · beat 1.2 s ago');
    expect(el.querySelector('[aria-label="Queued builds"]')!.textContent).toContain('f8-bb (gpu=H100): no live worker matches target gpu=H100');
    expect(panel.textContent).toContain('Recent: f6-cc succeeded on node1-gpu1');
  });

  it('is not there on a serve that builds locally, nor where the host offers no farm view', async () => {
    const local = new ScriptedClient() as ScriptedClient & { farmStatus(): Promise<FarmStatus | null> };
    local.farmStatus = async () => null;
    expect((await renderWith(local)).querySelector('section.farm')).toBeNull();
    act(() => root!.unmount());
    root = undefined;
    expect((await renderWith(new ScriptedClient())).querySelector('section.farm')).toBeNull();
  });
});

describe('build farm panel, live', () => {
  it('follows the farm stream: each status the service pushes replaces the last, with no reads of its own', async () => {
    type Handlers = { onStatus(s: FarmStatus | null): void; onError?(e: Error): void };
    const client = new ScriptedClient() as ScriptedClient & { subscribeFarm(h: Handlers): () => void; farmStatus(): Promise<FarmStatus | null> };
    let push!: Handlers;
    let unsubscribed = false;
    let reads = 0;
    client.subscribeFarm = (h) => {
      push = h;
      return () => void (unsubscribed = true);
    };
    client.farmStatus = async () => {
      reads++;
      return status;
    };
    const el = await renderWith(client);
    expect(el.querySelector('section.farm')!.textContent).toContain('Reading the farm…');
    await act(async () => push.onStatus(status));
    expect(el.querySelector('section.farm')!.textContent).toContain('2 workers · 1 of 2 slots busy · 1 queued');
    await act(async () => push.onStatus({ ...status, workers: status.workers.map((w) => ({ ...w, running: [] })), running: [], pools: [] }));
    expect(el.querySelector('section.farm')!.textContent).toContain('2 workers · 0 of 2 slots busy · 0 queued');
    await act(async () => push.onError?.(new Error('Lost the connection to the build service: reset')));
    expect(el.querySelector('section.farm')!.textContent).toContain('Farm: Lost the connection to the build service: reset');
    expect(reads).toBe(0);
    act(() => root!.unmount());
    root = undefined;
    expect(unsubscribed).toBe(true);
  });

  it('goes away when the stream says the service has no farm', async () => {
    const client = new ScriptedClient() as ScriptedClient & { subscribeFarm(h: { onStatus(s: FarmStatus | null): void }): () => void };
    client.subscribeFarm = (h) => {
      setTimeout(() => h.onStatus(null), 0);
      return () => undefined;
    };
    const el = await renderWith(client);
    await act(async () => new Promise((r) => setTimeout(r, 20)));
    expect(el.querySelector('section.farm')).toBeNull();
  });
});
