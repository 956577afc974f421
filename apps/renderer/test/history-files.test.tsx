// @vitest-environment happy-dom
// History links every succeeded build to its engine and manifest: in the browser as links the
// service serves (GET /api/builds/:id/engine, /manifest), on the desktop as buttons that open the
// file manager at the file (showBuildFile; main checks the build still owns it). A failure says
// why; clicking a link never also picks the row.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildRecord } from '../../shared/protocol.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };

/** The desktop host: no links, the file manager instead. */
class DesktopClient extends ScriptedClient {
  override readonly capabilities = { host: 'electron', nativeDialogs: true, recentFiles: false } as never;
  shown: Array<[string, string]> = [];
  refuse?: string;
  async showBuildFile(id: string, file: 'engine' | 'manifest'): Promise<{ path: string }> {
    if (this.refuse) throw new Error(this.refuse);
    this.shown.push([id, file]);
    return { path: `/out/${id}.engine${file === 'manifest' ? '.manifest.json' : ''}` };
  }
}

/** The browser host: links the service serves. */
class WebClient extends ScriptedClient {
  buildFileLinks(id: string) {
    return { engine: `/api/builds/${id}/engine`, manifest: `/api/builds/${id}/manifest` };
  }
}

const rec = (id: string, engineAvailable: boolean): BuildRecord => ({
  id,
  state: engineAvailable ? 'succeeded' : 'failed',
  modelPath: '/m/model.onnx',
  model: summary,
  options: { backend: 'simulated' },
  queuedAt: '',
  lastSeq: 1,
  phases: [],
  engineAvailable,
});

let mounted: MountedApp | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function history(client: ScriptedClient): Promise<HTMLElement> {
  client.builds = [rec('b1', true), rec('b2', false)];
  mounted = await mountApp(client, sched);
  await act(async () => mounted!.controller.refreshHistory());
  return mounted.host.querySelector('section.history') as HTMLElement;
}
const rowOf = (panel: HTMLElement, id: string) => panel.querySelector(`tr[aria-label^="Build ${id}:"]`) as HTMLElement;

describe('History links each build to its engine and manifest', () => {
  it('in the browser: links to the service, only for a build with an engine', async () => {
    const panel = await history(new WebClient());
    const links = [...rowOf(panel, 'b1').querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]);
    expect(links).toEqual([
      ['engine', '/api/builds/b1/engine'],
      ['manifest', '/api/builds/b1/manifest'],
    ]);
    expect(rowOf(panel, 'b2').querySelector('.hist-files')).toBeNull();
  });

  it('on the desktop: opens the file manager at the file, without picking the row', async () => {
    const client = new DesktopClient();
    const panel = await history(client);
    const watched: string[] = [];
    const watch = mounted!.controller.watch.bind(mounted!.controller);
    mounted!.controller.watch = (id: string) => {
      watched.push(id);
      return watch(id);
    };
    const buttons = [...rowOf(panel, 'b1').querySelectorAll<HTMLButtonElement>('.hist-files button')];
    expect(buttons.map((b) => b.textContent)).toEqual(['engine', 'manifest']);
    await act(async () => buttons[1].click());
    await act(async () => buttons[0].click());
    expect(client.shown).toEqual([
      ['b1', 'manifest'],
      ['b1', 'engine'],
    ]);
    expect(watched).toEqual([]);
    expect(rowOf(panel, 'b2').querySelector('.hist-files')).toBeNull();
    expect(panel.querySelector('a')).toBeNull();
  });

  it('on the desktop: says why when the file cannot be shown', async () => {
    const client = new DesktopClient();
    client.refuse = 'Build b1 has no manifest beside its engine (/out/b1.engine.manifest.json).';
    const panel = await history(client);
    const manifest = [...rowOf(panel, 'b1').querySelectorAll<HTMLButtonElement>('.hist-files button')][1];
    await act(async () => manifest.click());
    expect(panel.querySelector('[role="alert"]')!.textContent).toBe(client.refuse);
  });
});
