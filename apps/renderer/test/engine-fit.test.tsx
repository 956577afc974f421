// @vitest-environment happy-dom
// The engines panel knows its engines: each listed engine is checked (the service's check, here
// scripted) and shows fits / needs rebuild with the first reason / unknown with what is missing;
// "Rebuild" opens the model the engine was built from with the settings its manifest records.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../shared/engine-manifest.js';
import type { ModelRef } from '../../shared/build-client.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };

const built = { buildId: 'b7', modelPath: '/srv/models/resnet.onnx', options: { backend: 'simulated' as const, optLevel: 5, simSeed: 9, maxAuxStreams: 2 } };
const RESULTS: Record<string, CheckResult> = {
  'fits.engine': { verdict: 'fits', engine: '/o/fits.engine', manifest: '/o/fits.engine.manifest.json', reasons: [], missing: [], notes: [], built },
  'stale.engine': {
    verdict: 'rebuild',
    engine: '/o/stale.engine',
    manifest: '/o/stale.engine.manifest.json',
    reasons: [
      { kind: 'tensorrt-version', what: 'TensorRT version', was: '10.16.0', now: '11.1.0' },
      { kind: 'model', what: 'model /srv/models/resnet.onnx (sha256 of the graph and its external data)', was: 'a'.repeat(64), now: 'b'.repeat(64) },
    ],
    missing: [],
    notes: [],
    built,
  },
  'bare.engine': {
    verdict: 'unknown',
    engine: '/o/bare.engine',
    manifest: '/o/bare.engine.manifest.json',
    reasons: [],
    missing: [{ kind: 'no-manifest', message: 'no manifest beside the engine (/o/bare.engine.manifest.json)' }],
    notes: [],
  },
};

class CheckingClient extends ScriptedClient {
  checked: string[] = [];
  opened: string[] = [];
  async checkEngine(name: string): Promise<CheckResult> {
    this.checked.push(name);
    return RESULTS[name];
  }
  async openModelPath(path: string): Promise<ModelRef> {
    this.opened.push(path);
    return { path, displayName: 'resnet.onnx', summary: { ...summary, fileName: 'resnet.onnx' } };
  }
}

let mounted: MountedApp | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

describe('the engines panel checks each engine', () => {
  it('shows fits, needs rebuild with the first reason, unknown with what is missing; Rebuild restores the settings', async () => {
    const client = new CheckingClient();
    client.engines = Object.keys(RESULTS).map((name) => ({ name, bytes: 10, modifiedAt: new Date().toISOString(), simulated: true }));
    mounted = await mountApp(client, sched);
    const panel = mounted.host.querySelector('section.engines') as HTMLElement;
    const item = (name: string) => [...panel.querySelectorAll('li')].find((li) => li.querySelector('.engine-name')?.textContent === name)!;
    for (let i = 0; i < 50 && [...panel.querySelectorAll('.engine-fit')].some((e) => e.textContent === 'checking…'); i++) {
      await act(async () => new Promise((r) => setTimeout(r, 10)));
    }
    expect(client.checked.sort()).toEqual(Object.keys(RESULTS).sort());
    const fit = (name: string) => item(name).querySelector('.engine-fit') as HTMLElement;
    expect(fit('fits.engine').querySelector('.tag')!.textContent).toBe('fits');
    expect(fit('stale.engine').querySelector('.tag')!.textContent).toBe('needs rebuild');
    expect(fit('stale.engine').querySelector('.engine-fit-reason')!.textContent).toBe('TensorRT version: was 10.16.0, now 11.1.0');
    // Every reason in the tooltip, not only the first.
    expect(fit('stale.engine').getAttribute('title')).toContain('model /srv/models/resnet.onnx');
    expect(fit('bare.engine').querySelector('.tag')!.textContent).toBe('unknown');
    expect(fit('bare.engine').textContent).toContain('no manifest beside the engine');
    // No manifest, nothing to rebuild from.
    expect(fit('bare.engine').querySelector('button')).toBeNull();

    const rebuild = fit('stale.engine').querySelector('button')!;
    expect(rebuild.textContent).toBe('Rebuild');
    await act(async () => rebuild.click());
    expect(client.opened).toEqual(['/srv/models/resnet.onnx']);
    const form = mounted.store.getState().form;
    expect({ backend: form.backend, optLevel: form.optLevel, simSeed: form.simSeed, maxAuxStreams: form.maxAuxStreams }).toEqual({
      backend: 'simulated',
      optLevel: 5,
      simSeed: '9',
      maxAuxStreams: '2',
    });
  });

  it('checks an engine once: listing again checks only what is new or changed', async () => {
    const client = new CheckingClient();
    const at = new Date(2026, 0, 1).toISOString();
    client.engines = Object.keys(RESULTS).map((name) => ({ name, bytes: 10, modifiedAt: at, simulated: true }));
    mounted = await mountApp(client, sched);
    const panel = mounted.host.querySelector('section.engines') as HTMLElement;
    const settle = async () => {
      for (let i = 0; i < 50 && (client.checked.length < expected || [...panel.querySelectorAll('.engine-fit')].some((e) => e.textContent === 'checking…')); i++) {
        await act(async () => new Promise((r) => setTimeout(r, 10)));
      }
    };
    let expected = 3;
    await settle();
    expect(client.checked.sort()).toEqual(Object.keys(RESULTS).sort());
    // Written again since: the same name with a new modification time is a new file to check.
    client.engines = client.engines.map((f) => (f.name === 'stale.engine' ? { ...f, modifiedAt: new Date(2026, 0, 2).toISOString() } : f));
    client.checked = [];
    expected = 1;
    const refresh = [...panel.querySelectorAll('button')].find((b) => b.textContent === 'Refresh')!;
    await act(async () => refresh.click());
    await settle();
    await act(async () => new Promise((r) => setTimeout(r, 50)));
    expect(client.checked).toEqual(['stale.engine']);
    expect(panel.querySelectorAll('.engine-fit .tag').length).toBe(3);
  });
});
