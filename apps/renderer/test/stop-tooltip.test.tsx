// @vitest-environment happy-dom
// The Stop button's tooltip names its keys (issue 38 item 5): Ctrl+. everywhere, and on the
// desktop also Shift+F5, the menu's second Stop key (IBus 1.5.26 takes Ctrl+. in text fields).
import { afterEach, describe, expect, it } from 'vitest';
import type { FrameScheduler } from '../store/event-pump.js';
import { mountApp, type MountedApp } from './mount-app.js';
import { ScriptedClient } from './scripted-client.js';

const sched: FrameScheduler = { request: () => {}, now: () => performance.now(), hidden: () => false };

class DesktopClient extends ScriptedClient {
  override readonly capabilities = { host: 'electron', nativeDialogs: true, recentFiles: true } as never;
}

let app: MountedApp | null = null;
afterEach(() => {
  app?.unmount();
  app = null;
});

const stopTitle = (m: MountedApp) => [...m.host.querySelectorAll('button')].find((b) => b.textContent === 'Stop')!.title;

describe('Stop tooltip', () => {
  it('names Ctrl+. in the browser (Shift+F5 there is a hard reload)', async () => {
    app = await mountApp(new ScriptedClient(), sched);
    expect(stopTitle(app)).toBe('Stop at the next step boundary (Ctrl+.)');
  });

  it('names both keys in the desktop app', async () => {
    app = await mountApp(new DesktopClient(), sched);
    expect(stopTitle(app)).toBe('Stop at the next step boundary (Ctrl+. or Shift+F5)');
  });
});
