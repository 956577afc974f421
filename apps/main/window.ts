// The one application window and the hardening around it. The renderer is treated as untrusted
// content: it runs sandboxed without Node, cannot navigate away from our origin, cannot open
// windows, and is refused every permission but clipboard writes (camera, notifications,
// clipboard-read, …: the UI needs none, and notifications are shown by main instead).
import { BrowserWindow, nativeTheme, type Session, type WebContents, type WebPreferences } from 'electron';
import { CONTENT_SECURITY_POLICY, isAppUrl } from './app-protocol.js';

export function secureWebPreferences(preloadPath: string): WebPreferences {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    navigateOnDragDrop: false,
    spellcheck: false,
  };
}

/** Keeps the contents on our page: no navigation, no new windows, no <webview>. */
export function hardenWebContents(contents: WebContents, log: (m: string) => void = () => undefined): void {
  const block = (event: { preventDefault(): void }, url: string) => {
    if (isAppUrl(url)) return;
    event.preventDefault();
    log(`blocked navigation to ${url}`);
  };
  contents.on('will-navigate', (event) => block(event, event.url));
  // Covers iframes too (will-navigate only sees the main frame).
  contents.on('will-frame-navigate', (event) => block(event, event.url));
  contents.on('will-redirect', (event) => block(event, event.url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    log(`blocked window.open(${url})`);
    return { action: 'deny' };
  });
}

/**
 * The one permission the page needs: writing text to the clipboard ("Copy as trtexec command",
 * copying log lines), for our own origin only. Reading the clipboard stays denied.
 */
const ALLOWED_PERMISSIONS = new Set(['clipboard-sanitized-write']);

function allowed(permission: string, origin: string | undefined): boolean {
  return ALLOWED_PERMISSIONS.has(permission) && origin !== undefined && isAppUrl(origin);
}

/** Denies every other permission and adds the CSP to responses the app protocol did not serve. */
export function hardenSession(ses: Session): void {
  ses.setPermissionRequestHandler((_wc, permission, callback, details) => callback(allowed(permission, details.requestingUrl)));
  ses.setPermissionCheckHandler((_wc, permission, requestingOrigin) => allowed(permission, requestingOrigin));
  ses.setDevicePermissionHandler(() => false);
  // app:// responses carry the header already; this covers anything else that might load (a dev
  // server, a file:// fallback is not covered: webRequest does not see file responses).
  ses.webRequest.onHeadersReceived((details, callback) => {
    const headers = { ...(details.responseHeaders ?? {}) };
    for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-security-policy') delete headers[k];
    headers['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
    callback({ responseHeaders: headers });
  });
}

export interface MainWindowOptions {
  preloadPath: string;
  url: string;
  /** The app's icon (packaging/icon.png, inside the app): outside an installed .desktop entry
   * (the unpacked dir target, `npm run app`) the window would otherwise show a generic one. */
  iconPath?: string;
  log?: (m: string) => void;
}

export function createMainWindow(opts: MainWindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1400,
    height: 900,
    minWidth: 900,
    minHeight: 560,
    title: 'TRT Build Studio',
    // Shown once the first paint is ready, so the user never sees an empty white frame.
    show: false,
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#1e1e1e' : '#ffffff',
    ...(opts.iconPath ? { icon: opts.iconPath } : {}),
    webPreferences: secureWebPreferences(opts.preloadPath),
  });
  hardenWebContents(win.webContents, opts.log);
  win.once('ready-to-show', () => win.show());
  // A page that fails to load never becomes ready-to-show; an invisible app is worse than an
  // error page, so show the window anyway.
  win.webContents.once('did-fail-load', (_e, code, description, url) => {
    opts.log?.(`failed to load ${url}: ${description} (${code})`);
    if (!win.isDestroyed()) win.show();
  });
  win.loadURL(opts.url).catch((err: Error) => opts.log?.(`loading ${opts.url} failed: ${err.message}`));
  return win;
}
