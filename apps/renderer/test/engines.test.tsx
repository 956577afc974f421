// @vitest-environment happy-dom
// The Engines panel with the real store and controller and a scripted client: it lists the
// service's output folder, refreshes when a build ends, and deletes only after a confirmation.
import { act } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient } from './scripted-client.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

let frames: ((t: number) => void)[] = [];
const sched: FrameScheduler = { request: (cb) => frames.push(cb), now: () => performance.now(), hidden: () => false };
const flushFrames = () =>
  act(() => {
    for (let i = 0; i < 100 && frames.length > 0; i++) {
      const q = frames;
      frames = [];
      for (const cb of q) cb(performance.now());
    }
  });

let host: HTMLElement;
let client: ScriptedClient;

const MiB = 1024 * 1024;
const engine = (name: string, bytes: number, simulated = true) => ({ name, bytes, modifiedAt: new Date().toISOString(), simulated });

let mounted: MountedApp;
async function mount(c: ScriptedClient) {
  client = c;
  mounted = await mountApp(c, sched);
  ({ host } = mounted);
}

beforeEach(async () => {
  const c = new ScriptedClient();
  c.engines = [engine('tiny.sim.sim-1.engine', 2 * MiB), engine('resnet.rtx4090.10.16.engine', 1 * MiB, false)];
  await mount(c);
});
afterEach(() => mounted.unmount());

const panel = () => host.querySelector('section.engines') as HTMLElement;
const rows = () => [...panel().querySelectorAll('li')].map((li) => li.textContent ?? '');
const button = (text: RegExp) => [...panel().querySelectorAll('button')].find((b) => text.test(b.textContent ?? ''))!;
const checkbox = (name: string) => panel().querySelector(`input[aria-label="Select ${name}"]`) as HTMLInputElement;

describe('Engines panel', () => {
  it('lists the folder with size, date, a sim tag only on simulated files, and the total', () => {
    expect(rows()).toHaveLength(2);
    expect(rows()[0]).toMatch(/^tiny\.sim\.sim-1\.enginesim2\.00 MiB · \d\d:\d\d$/);
    expect(panel().querySelectorAll('li')[1].querySelector('.tag')).toBeNull();
    expect(panel().querySelector('[aria-label="total size"]')!.textContent).toBe('2 files · 3.00 MiB');
    expect(button(/^Delete selected/).disabled).toBe(true);
  });

  it('deletes the selected engines only after the confirmation, then lists again', async () => {
    act(() => checkbox('tiny.sim.sim-1.engine').click());
    await act(async () => button(/^Delete selected \(1\)$/).click());
    expect(client.deleteCalls).toEqual([]); // nothing happens before the confirmation
    expect(panel().querySelector('[role="alertdialog"]')!.textContent).toContain('Delete 1 engine (2.00 MiB) from disk?');
    await act(async () => button(/^Cancel$/).click());
    expect(client.deleteCalls).toEqual([]);
    await act(async () => button(/^Delete selected/).click());
    await act(async () => button(/^Delete$/).click());
    expect(client.deleteCalls).toEqual([['tiny.sim.sim-1.engine']]);
    expect(rows()).toHaveLength(1);
    expect(rows()[0]).toContain('resnet.rtx4090.10.16.engine');
    expect(panel().textContent).toContain('Deleted 1 engine.');
    expect(panel().querySelector('[aria-label="total size"]')!.textContent).toBe('1 file · 1.00 MiB');
  });

  it('says which files the service refused and why', async () => {
    client.undeletable.set('resnet.rtx4090.10.16.engine', 'a running or queued build writes this file');
    act(() => checkbox('resnet.rtx4090.10.16.engine').click());
    await act(async () => button(/^Delete selected/).click());
    await act(async () => button(/^Delete$/).click());
    expect(panel().querySelector('[role="alert"]')!.textContent).toBe('Not deleted: resnet.rtx4090.10.16.engine (a running or queued build writes this file)');
    expect(rows()).toHaveLength(2);
  });

  it('lists again when a build finishes', async () => {
    await act(async () => [...host.querySelectorAll('button')].find((b) => b.textContent === 'Open model…')!.click());
    await act(async () => [...host.querySelectorAll('button')].find((b) => b.textContent === 'Build')!.click());
    client.engines = [engine('tiny.sim.sim-1-b1.engine', 4096), ...client.engines];
    const w = new StreamWriter('b1');
    w.started();
    w.finished('succeeded', { engineBytes: 4096 });
    act(() => client.push('b1', w.events));
    flushFrames();
    await act(async () => undefined);
    expect(rows()[0]).toMatch(/^tiny\.sim\.sim-1-b1\.enginesim4\.00 KiB/);
    expect(rows()).toHaveLength(3);
  });

  it('is not shown by a host that keeps no engine folder', async () => {
    mounted.unmount();
    // The scripted client's methods live on its prototype: hide them on this instance.
    const farm = new ScriptedClient();
    Object.defineProperty(farm, 'listEngines', { value: undefined });
    await mount(farm);
    expect(host.querySelector('section.engines')).toBeNull();
  });
});
