// @vitest-environment happy-dom
// How a model's name and path reach the user: tooltips show the name they know (and the path only
// when it is theirs: the desktop app's file, not the browser's upload copy), and the history shows
// a long name on one line, cut in the middle so that its end and extension stay visible.
import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildRecord } from '../../shared/protocol.js';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient, summary } from './scripted-client.js';

const sched: FrameScheduler = { request: () => undefined, now: () => performance.now(), hidden: () => false };

/** The scripted client as the Electron preload presents itself. */
class ElectronClient extends ScriptedClient {
  override readonly capabilities = { host: 'electron', nativeDialogs: true, recentFiles: false } as never;
}

const UPLOAD = '/tmp/tbs-uploads-4242-987654-AbC123/upload-0123456789abcdef01234567.onnx';
const LONG = `${'resnet50-imagenet-'.repeat(13)}final-v2.onnx`; // 247 characters
const CJK = `${'模型'.repeat(50)}.onnx`;

let mounted: MountedApp | undefined;
afterEach(() => {
  mounted?.unmount();
  mounted = undefined;
});

async function openIn(client: ScriptedClient, path: string, displayName: string): Promise<HTMLElement> {
  client.nextModel = { path, displayName, summary: { ...summary, fileName: displayName } };
  mounted = await mountApp(client, sched);
  const open = [...mounted.host.querySelectorAll('button')].find((b) => b.textContent === 'Open model…')!;
  await act(async () => open.click());
  return mounted.host;
}

const fileField = (host: HTMLElement) => {
  const dt = [...host.querySelectorAll('.model-summary dt')].find((d) => d.textContent === 'File')!;
  return dt.nextElementSibling as HTMLElement;
};
const toolbarName = (host: HTMLElement) => host.querySelector('.toolbar-model') as HTMLElement;

describe('model tooltips', () => {
  it("in the browser: the uploaded file name, never the server's upload path", async () => {
    const host = await openIn(new ScriptedClient(), UPLOAD, CJK);
    expect(fileField(host).textContent).toBe(CJK);
    expect(fileField(host).getAttribute('title')).toBe(CJK);
    expect(toolbarName(host).textContent).toBe(CJK);
    expect(toolbarName(host).getAttribute('title')).toBe(CJK);
    expect(host.innerHTML).not.toContain('tbs-uploads');
  });

  it('in the desktop app: the name, and the real path under it', async () => {
    const local = '/home/ana/models/resnet.onnx';
    const host = await openIn(new ElectronClient(), local, 'resnet.onnx');
    expect(fileField(host).getAttribute('title')).toBe(`resnet.onnx\n${local}`);
    expect(toolbarName(host).getAttribute('title')).toBe(`resnet.onnx\n${local}`);
  });

  it('in the browser, a model the server was asked for by its path keeps that path', async () => {
    const host = await openIn(new ScriptedClient(), '/srv/models/resnet.onnx', 'resnet.onnx');
    expect(fileField(host).getAttribute('title')).toBe('resnet.onnx\n/srv/models/resnet.onnx');
  });
});

describe('history names', () => {
  const rec = (id: string, modelPath: string, fileName: string, bytes = 2048): BuildRecord => ({
    id,
    state: 'succeeded',
    modelPath,
    model: { ...summary, fileName, fileBytes: bytes },
    options: { backend: 'auto' },
    queuedAt: '',
    lastSeq: 1,
    phases: [],
    engineAvailable: true,
  });

  async function history(client: ScriptedClient, builds: BuildRecord[]): Promise<HTMLElement[]> {
    client.builds = builds;
    mounted = await mountApp(client, sched);
    await act(async () => mounted!.controller.refreshHistory());
    return [...mounted.host.querySelectorAll<HTMLElement>('.hist td.path')];
  }

  it('a past build picked with no model open shows the model it was built from', async () => {
    const cells = await history(new ScriptedClient(), [rec('b1', UPLOAD, 'yolo v8.onnx')]);
    expect(mounted!.host.querySelector('.model-summary')).toBeNull();
    await act(async () => cells[0].closest('tr')!.click());
    expect(fileField(mounted!.host).textContent).toBe('yolo v8.onnx');
    expect(fileField(mounted!.host).getAttribute('title')).not.toContain('tbs-uploads');
    expect(mounted!.host.querySelector('.model-panel')!.textContent).toContain('The model of the build shown');
  });

  it('a long name: one line, its start elided, its end and extension always shown, the whole name in the tooltip', async () => {
    const [cell] = await history(new ScriptedClient(), [rec('a', UPLOAD, LONG)]);
    const name = cell.querySelector('.file-name')!;
    expect(name.textContent).toBe(LONG); // copying the cell gives the whole name
    expect(name.querySelector('.name-head')!.textContent).toBe(LONG.slice(0, -'nal-v2.onnx'.length));
    expect(name.querySelector('.name-tail')!.textContent).toBe('nal-v2.onnx');
    expect(cell.getAttribute('title')).toBe(`${LONG}\n2.00 KiB, 10 nodes`);
    expect(cell.getAttribute('title')).not.toContain('tbs-uploads');
  });

  it('CJK names are split between characters', async () => {
    const [cell] = await history(new ScriptedClient(), [rec('a', UPLOAD, CJK)]);
    expect(cell.querySelector('.name-tail')!.textContent).toBe('型模型.onnx');
    expect(cell.querySelector('.file-name')!.textContent).toBe(CJK);
  });

  it('same-named models are still told apart by their size, outside the elided part', async () => {
    const cells = await history(new ScriptedClient(), [rec('a', `${UPLOAD}-1`, LONG, 2048), rec('b', `${UPLOAD}-2`, LONG, 4 * 1024 * 1024)]);
    expect(cells.map((c) => c.textContent)).toEqual([`${LONG} (4.00 MiB)`, `${LONG} (2.00 KiB)`]);
    for (const c of cells) expect(c.querySelector('.file-name .muted')).toBeNull();
  });

  it("in the desktop app the tooltip keeps the model's path", async () => {
    const [cell] = await history(new ElectronClient(), [rec('a', '/home/ana/m/x/resnet.onnx', 'resnet.onnx')]);
    expect(cell.getAttribute('title')).toBe('resnet.onnx\n2.00 KiB, 10 nodes\n…/m/x/resnet.onnx');
  });
});
