import { beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeBrowserWindow, FakeSession, FakeWebContents, fakeEvent } from './fake-electron.js';

vi.mock('electron', async () => {
  const fake = await import('./fake-electron.js');
  return { BrowserWindow: fake.FakeBrowserWindow, nativeTheme: { shouldUseDarkColors: true } };
});

const { createMainWindow, hardenSession, hardenWebContents } = await import('../window.js');
const { APP_INDEX_URL, CONTENT_SECURITY_POLICY } = await import('../app-protocol.js');

describe('main window', () => {
  beforeEach(() => {
    FakeBrowserWindow.instances.length = 0;
  });

  it('is created with every isolation setting on and loads our own origin', () => {
    const win = createMainWindow({ preloadPath: '/app/dist/apps/main/preload.cjs', url: APP_INDEX_URL }) as unknown as FakeBrowserWindow;
    const prefs = win.options.webPreferences as Record<string, unknown>;
    expect(prefs).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      preload: '/app/dist/apps/main/preload.cjs',
    });
    expect(win.loadedUrl).toBe('app://studio/index.html');
    // Not shown until the first paint is ready.
    expect(win.options.show).toBe(false);
    expect(win.shown).toBe(false);
    win.emit('ready-to-show');
    expect(win.shown).toBe(true);
  });

  it('shows the window even when the page fails to load', () => {
    const logged: string[] = [];
    const win = createMainWindow({ preloadPath: '/p.cjs', url: APP_INDEX_URL, log: (m) => logged.push(m) }) as unknown as FakeBrowserWindow;
    win.webContents.emit('did-fail-load', {}, -6, 'ERR_FILE_NOT_FOUND', APP_INDEX_URL);
    expect(win.shown).toBe(true);
    expect(logged.join('\n')).toContain('ERR_FILE_NOT_FOUND');
  });
});

describe('web contents hardening', () => {
  const setup = () => {
    const wc = new FakeWebContents();
    const logged: string[] = [];
    hardenWebContents(wc as never, (m) => logged.push(m));
    return { wc, logged };
  };

  it('blocks navigation away from the app, in the top frame and in subframes', () => {
    const { wc, logged } = setup();
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect']) {
      for (const url of ['https://example.com/', 'file:///etc/passwd', 'app://other/index.html', 'javascript:alert(1)']) {
        const e = fakeEvent({ url });
        wc.emit(event, e);
        expect(e.defaultPrevented, `${event} ${url}`).toBe(true);
      }
    }
    expect(logged.some((l) => l.includes('https://example.com/'))).toBe(true);
  });

  it('lets in-app navigation through (e.g. the page reloading itself)', () => {
    const { wc } = setup();
    const e = fakeEvent({ url: 'app://studio/index.html#/history' });
    wc.emit('will-navigate', e);
    expect(e.defaultPrevented).toBe(false);
  });

  it('denies window.open and <webview>', () => {
    const { wc } = setup();
    expect(wc.windowOpenHandler?.({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler?.({ url: 'app://studio/index.html' })).toEqual({ action: 'deny' });
    const e = fakeEvent({});
    wc.emit('will-attach-webview', e, {}, {});
    expect(e.defaultPrevented).toBe(true);
  });
});

describe('session hardening', () => {
  it('refuses every permission request and check except clipboard writes from our page', () => {
    const ses = new FakeSession();
    hardenSession(ses as never);
    for (const permission of ['media', 'notifications', 'clipboard-read', 'geolocation', 'openExternal', 'fullscreen']) {
      const cb = vi.fn();
      ses.permissionRequestHandler?.({}, permission, cb, { requestingUrl: 'app://studio/index.html' });
      expect(cb, permission).toHaveBeenCalledWith(false);
      expect(ses.permissionCheckHandler?.({}, permission, 'app://studio', {}), permission).toBe(false);
    }
    const cb = vi.fn();
    ses.permissionRequestHandler?.({}, 'clipboard-sanitized-write', cb, { requestingUrl: 'app://studio/index.html' });
    expect(cb).toHaveBeenCalledWith(true);
    expect(ses.permissionCheckHandler?.({}, 'clipboard-sanitized-write', 'app://studio', {})).toBe(true);
    // Not for anyone else, should something foreign ever load.
    const other = vi.fn();
    ses.permissionRequestHandler?.({}, 'clipboard-sanitized-write', other, { requestingUrl: 'https://evil.example/' });
    expect(other).toHaveBeenCalledWith(false);
    expect(ses.permissionCheckHandler?.({}, 'clipboard-sanitized-write', 'file://', {})).toBe(false);
    expect(ses.devicePermissionHandler?.({})).toBe(false);
  });

  it('puts our CSP on responses, replacing any the server sent', () => {
    const ses = new FakeSession();
    hardenSession(ses as never);
    const cb = vi.fn();
    ses.headersListener?.({ responseHeaders: { 'content-security-policy': ["default-src *; script-src 'unsafe-eval'"], 'X-Other': ['1'] } }, cb);
    const headers = cb.mock.calls[0][0].responseHeaders as Record<string, string[]>;
    const csp = Object.entries(headers).filter(([k]) => k.toLowerCase() === 'content-security-policy');
    expect(csp).toEqual([['Content-Security-Policy', [CONTENT_SECURITY_POLICY]]]);
    expect(headers['X-Other']).toEqual(['1']);
  });

  it('has a CSP that forbids inline and remote script, eval, plugins and framing', () => {
    const directives = Object.fromEntries(
      CONTENT_SECURITY_POLICY.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|https?:|\*/);
  });
});
