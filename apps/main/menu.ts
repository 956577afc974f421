// The application menu. Its commands act on state the renderer owns (the open model, the current
// options, the running build), so each one is forwarded to the page as a host action; the page
// runs it exactly as if its own button had been pressed.
import type { MenuItemConstructorOptions } from 'electron';
import type { HostAction } from './ipc-channels.js';

export const MENU_IDS = { open: 'open', recent: 'recent', build: 'build', stop: 'stop', stopAlt: 'stop-alt', save: 'save', trtLocation: 'trt-location' } as const;

/**
 * Stop's keys. Ctrl+. is IBus's emoji hotkey on Ubuntu 22.04 (IBus 1.5.26): with a text field
 * focused, the input method takes it and Stop never arrives. Shift+F5 (VS Code's "stop") is taken
 * by no input method. A menu item has one accelerator, so each key has its own item.
 */
export const STOP_ACCELERATORS = ['CmdOrCtrl+.', 'Shift+F5'] as const;

/** A file path as a menu label: a single '&' would be taken as a mnemonic marker and vanish. */
export function menuLabelForPath(p: string): string {
  return p.replace(/&/g, '&&');
}

export interface MenuContext {
  isMac: boolean;
  isPackaged: boolean;
  sendAction(action: HostAction): void;
  recent: readonly string[];
  openRecent(path: string): void;
  /** File ▸ TensorRT Location…: main's folder dialog (trt-location.ts). */
  chooseTrtLocation?(): void;
}

export function buildMenuTemplate(ctx: MenuContext): MenuItemConstructorOptions[] {
  const act = (action: HostAction) => () => ctx.sendAction(action);
  const recentItems: MenuItemConstructorOptions[] = ctx.recent.length
    ? ctx.recent.map((p) => ({ label: menuLabelForPath(p), click: () => ctx.openRecent(p) }))
    : [{ label: 'No recent models', enabled: false }];

  const file: MenuItemConstructorOptions = {
    label: '&File',
    submenu: [
      { id: MENU_IDS.open, label: 'Open Model…', accelerator: 'CmdOrCtrl+O', click: act('open') },
      { id: MENU_IDS.recent, label: 'Open Recent', submenu: recentItems },
      { type: 'separator' },
      { id: MENU_IDS.save, label: 'Save Engine…', accelerator: 'CmdOrCtrl+S', click: act('save') },
      ...(ctx.chooseTrtLocation ? [{ type: 'separator' } as const, { id: MENU_IDS.trtLocation, label: 'TensorRT Location…', click: () => ctx.chooseTrtLocation?.() }] : []),
      ...(ctx.isMac ? [] : [{ type: 'separator' } as const, { role: 'quit' } as const]),
    ],
  };
  const build: MenuItemConstructorOptions = {
    label: '&Build',
    submenu: [
      { id: MENU_IDS.build, label: 'Build', accelerator: 'CmdOrCtrl+B', click: act('build') },
      // Never a bare Escape: the menu receives every key the page does not preventDefault, so an
      // Esc meant for a picker or a text field would end a build. Disabled while idle.
      { id: MENU_IDS.stop, label: 'Stop', accelerator: STOP_ACCELERATORS[0], enabled: false, click: act('stop') },
      { id: MENU_IDS.stopAlt, label: 'Stop (when an input method takes Ctrl+.)', accelerator: STOP_ACCELERATORS[1], enabled: false, click: act('stop') },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: '&View',
    submenu: [
      ...(ctx.isPackaged ? [] : ([{ role: 'reload' }, { role: 'toggleDevTools' }, { type: 'separator' }] as const)),
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };
  const edit: MenuItemConstructorOptions = { role: 'editMenu' };
  const appMenu: MenuItemConstructorOptions[] = ctx.isMac ? [{ role: 'appMenu' }] : [];
  return [...appMenu, file, edit, build, view, { role: 'windowMenu' }];
}

/** The parts of Menu the state updates touch. */
export interface MenuLike {
  getMenuItemById(id: string): { enabled: boolean } | null;
}

/** Stop is only a command while a build runs (both of its items). */
export function setBuildRunning(menu: MenuLike | null, running: boolean): void {
  for (const id of [MENU_IDS.stop, MENU_IDS.stopAlt]) {
    const stop = menu?.getMenuItemById(id);
    if (stop) stop.enabled = running;
  }
}
