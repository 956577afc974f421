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
  isMinimized() {
    return false;
  }
  restore() {}
  focus() {}
  reload() {}
  static fromWebContents(wc: unknown): FakeBrowserWindow | null {
    return FakeBrowserWindow.instances.find((w) => w.webContents === wc) ?? null;
  }
}

/** Electron's app: quit() emits before-quit and only "exits" when nobody prevented it. */
export class FakeApp extends EventEmitter {
  isPackaged = false;
  exited = false;
  /** Electron's default when started without a package.json naming the app. */
  name = 'Electron';
  desktopName: string | null = null;
  /** Whether setDesktopName came before 'ready' (Electron ignores it later). */
  desktopNameBeforeReady = false;
  isReady = false;
  readonly paths = new Map<string, string>();
  readonly recentDocuments: string[] = [];
  /** Chromium switches appended (before 'ready', where they take effect). */
  readonly commandLine = {
    switches: [] as Array<[string, string | undefined]>,
    appendSwitch(name: string, value?: string) {
      this.switches.push([name, value]);
    },
  };
  relaunched = 0;
  private resolveReady!: () => void;
  private readonly ready = new Promise<void>((r) => (this.resolveReady = r));
  constructor(private readonly appPath: string) {
    super();
  }
  getAppPath() {
    return this.appPath;
  }
  getPath(name: string) {
    const p = this.paths.get(name);
    if (!p) throw new Error(`no fake path for ${name}`);
    return p;
  }
  setPath(name: string, p: string) {
    this.paths.set(name, p);
  }
  requestSingleInstanceLock() {
    return true;
  }
  whenReady() {
    return this.ready;
  }
  getName() {
    return this.name;
  }
  setName(name: string) {
    this.name = name;
  }
  setDesktopName(name: string) {
    this.desktopName = name;
    this.desktopNameBeforeReady = !this.isReady;
  }
  becomeReady() {
    this.isReady = true;
    this.resolveReady();
    this.emit('ready');
  }
  addRecentDocument(p: string) {
    this.recentDocuments.push(p);
  }
  relaunch() {
    this.relaunched++;
  }
  quit() {
    const e = fakeEvent({});
    this.emit('before-quit', e);
    if (!e.defaultPrevented) this.exited = true;
  }
}

type Item = { id?: string; enabled?: boolean; submenu?: Item[]; [k: string]: unknown };

export class FakeMenu {
  static current: FakeMenu | null = null;
  private readonly items: Item[];
  constructor(readonly template: Item[]) {
    const flat = (xs: Item[]): Item[] => xs.flatMap((x) => [x, ...(Array.isArray(x.submenu) ? flat(x.submenu) : [])]);
    this.items = flat(template);
  }
  getMenuItemById(id: string) {
    const item = this.items.find((i) => i.id === id);
    if (item && item.enabled === undefined) item.enabled = true;
    return (item as { enabled: boolean } | undefined) ?? null;
  }
  static buildFromTemplate(t: Item[]) {
    return new FakeMenu(t);
  }
  static setApplicationMenu(m: FakeMenu | null) {
    FakeMenu.current = m;
  }
  static getApplicationMenu() {
    return FakeMenu.current;
  }
}

export class FakeNotification extends EventEmitter {
  static shown: Array<{ title: string; body: string }> = [];
  static instances: FakeNotification[] = [];
  constructor(readonly options: { title: string; body: string }) {
    super();
    FakeNotification.instances.push(this);
  }
  static isSupported() {
    return true;
  }
  show() {
    FakeNotification.shown.push(this.options);
  }
}

export class FakeProtocol {
  privileged: unknown[] = [];
  handlers = new Map<string, (r: Request) => Promise<Response>>();
  registeredBeforeReady = false;
  registerSchemesAsPrivileged(schemes: unknown[]) {
    this.privileged.push(...schemes);
  }
  handle(scheme: string, fn: (r: Request) => Promise<Response>) {
    this.handlers.set(scheme, fn);
  }
}

export class FakeIpcMain {
  readonly handlers = new Map<string, (event: unknown, payload?: unknown) => Promise<unknown>>();
  handle(channel: string, fn: (event: unknown, payload?: unknown) => Promise<unknown>) {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, fn);
  }
  removeHandler(channel: string) {
    this.handlers.delete(channel);
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

/** Electron's powerSaveBlocker: ids from start(), stop() ends one. */
export class FakePowerSaveBlocker {
  readonly active = new Map<number, string>();
  private next = 1;
  start(type: string) {
    const id = this.next++;
    this.active.set(id, type);
    return id;
  }
  stop(id: number) {
    return this.active.delete(id);
  }
  isStarted(id: number) {
    return this.active.has(id);
  }
}
