// Stand-ins for the parts of Electron the main-process modules use. The real binary cannot run
// here (and `require('electron')` under Node would try to download it), so tests mock the module
// with these: they record what the code asked Electron to do and let tests fire its events.
import { EventEmitter } from 'node:events';

export class FakeSession {
  permissionRequestHandler: ((wc: unknown, permission: string, cb: (granted: boolean) => void, details: unknown) => void) | null = null;
  permissionCheckHandler: ((...args: unknown[]) => boolean) | null = null;
  devicePermissionHandler: ((...args: unknown[]) => boolean) | null = null;
  headersListener: ((details: { responseHeaders?: Record<string, string[]> }, cb: (r: { responseHeaders: Record<string, string[]> }) => void) => void) | null = null;
  setPermissionRequestHandler(h: FakeSession['permissionRequestHandler']) {
    this.permissionRequestHandler = h;
  }
  setPermissionCheckHandler(h: FakeSession['permissionCheckHandler']) {
    this.permissionCheckHandler = h;
  }
  setDevicePermissionHandler(h: FakeSession['devicePermissionHandler']) {
    this.devicePermissionHandler = h;
  }
  webRequest = {
    onHeadersReceived: (h: FakeSession['headersListener']) => {
      this.headersListener = h;
    },
  };
}

let nextContentsId = 1;

export class FakeWebContents extends EventEmitter {
  readonly id = nextContentsId++;
  readonly sent: Array<[string, unknown]> = [];
  destroyed = false;
  windowOpenHandler: ((d: { url: string }) => { action: string }) | null = null;
  send(channel: string, message: unknown) {
    if (this.destroyed) throw new Error('Object has been destroyed');
    this.sent.push([channel, message]);
  }
  isDestroyed() {
    return this.destroyed;
  }
  setWindowOpenHandler(h: FakeWebContents['windowOpenHandler']) {
    this.windowOpenHandler = h;
  }
}

export class FakeBrowserWindow extends EventEmitter {
  static instances: FakeBrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  readonly progress: Array<[number, unknown]> = [];
  loadedUrl: string | null = null;
  focused = true;
  shown = false;
  constructor(readonly options: Record<string, unknown>) {
    super();
    FakeBrowserWindow.instances.push(this);
  }
  loadURL(url: string) {
    this.loadedUrl = url;
    return Promise.resolve();
  }
  show() {
    this.shown = true;
  }
  isDestroyed() {
    return false;
  }
  isFocused() {
    return this.focused;
  }
  setProgressBar(p: number, opts?: unknown) {
    this.progress.push([p, opts]);
  }
}

/** An event object like Electron's: records preventDefault. */
export function fakeEvent<T extends object>(fields: T): T & { defaultPrevented: boolean; preventDefault(): void } {
  const e = {
    ...fields,
    defaultPrevented: false,
    preventDefault() {
      e.defaultPrevented = true;
    },
  };
  return e;
}
