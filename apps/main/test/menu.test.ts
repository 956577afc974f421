import type { MenuItemConstructorOptions } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import { buildMenuTemplate, MENU_IDS, menuLabelForPath, setBuildRunning } from '../menu.js';

function flatten(items: MenuItemConstructorOptions[]): MenuItemConstructorOptions[] {
  return items.flatMap((i) => [i, ...(Array.isArray(i.submenu) ? flatten(i.submenu) : [])]);
}

const make = (over: Partial<Parameters<typeof buildMenuTemplate>[0]> = {}) => {
  const sendAction = vi.fn();
  const openRecent = vi.fn();
  const items = flatten(buildMenuTemplate({ isMac: false, isPackaged: true, sendAction, recent: [], openRecent, ...over }));
  const byId = (id: string) => items.find((i) => i.id === id)!;
  return { items, byId, sendAction, openRecent };
};

describe('application menu', () => {
  it('has the documented shortcuts, each forwarded to the page as an action', () => {
    const { byId, sendAction } = make();
    const expected = [
      [MENU_IDS.open, 'CmdOrCtrl+O', 'open'],
      [MENU_IDS.build, 'CmdOrCtrl+B', 'build'],
      [MENU_IDS.stop, 'CmdOrCtrl+.', 'stop'],
      [MENU_IDS.stopAlt, 'Shift+F5', 'stop'],
      [MENU_IDS.save, 'CmdOrCtrl+S', 'save'],
    ] as const;
    for (const [id, accelerator, action] of expected) {
      const item = byId(id);
      expect(item.accelerator, id).toBe(accelerator);
      (item.click as () => void)();
      expect(sendAction).toHaveBeenLastCalledWith(action);
    }
  });

  it('no menu item takes a bare Escape (it would stop a build from any picker or field)', () => {
    const accels = make()
      .items.map((i) => i.accelerator)
      .filter(Boolean);
    expect(accels).not.toContain('Escape');
    expect(accels).not.toContain('Esc');
  });

  it('accelerators are unique', () => {
    const accels = make()
      .items.map((i) => i.accelerator)
      .filter(Boolean);
    expect(new Set(accels).size).toBe(accels.length);
  });

  it('Stop has a second key no input method takes (IBus 1.5.26 uses Ctrl+. for emoji), named in its label', () => {
    const { items } = make();
    const stops = items.filter((i) => i.id === MENU_IDS.stop || i.id === MENU_IDS.stopAlt);
    expect(stops.map((i) => i.accelerator)).toEqual(['CmdOrCtrl+.', 'Shift+F5']);
    // Keys input methods are known to take: IBus (Ctrl+., Ctrl+;, Ctrl+Shift+U/E), Fcitx (Ctrl+Space, Ctrl+Alt+…).
    expect(stops[1].accelerator).not.toMatch(/Ctrl\+(\.|;|Space|Shift\+[UE]|Alt)/);
    expect(stops[1].label).toContain('Ctrl+.');
  });

  it('enables Stop (both of its keys) only while a build runs', () => {
    const { byId } = make();
    expect(byId(MENU_IDS.stop).enabled).toBe(false);
    expect(byId(MENU_IDS.stopAlt).enabled).toBe(false);
    const stop = { enabled: false };
    const alt = { enabled: false };
    const menu = { getMenuItemById: (id: string) => (id === MENU_IDS.stop ? stop : id === MENU_IDS.stopAlt ? alt : null) };
    setBuildRunning(menu, true);
    expect([stop.enabled, alt.enabled]).toEqual([true, true]);
    setBuildRunning(menu, false);
    expect([stop.enabled, alt.enabled]).toEqual([false, false]);
    expect(() => setBuildRunning(null, true)).not.toThrow();
  });

  it('lists recent models, or says there are none', () => {
    const none = make().byId(MENU_IDS.recent).submenu as MenuItemConstructorOptions[];
    expect(none).toEqual([{ label: 'No recent models', enabled: false }]);
    const { byId, openRecent } = make({ recent: ['/m/a.onnx', '/m/b.onnx'] });
    const items = byId(MENU_IDS.recent).submenu as MenuItemConstructorOptions[];
    expect(items.map((i) => i.label)).toEqual(['/m/a.onnx', '/m/b.onnx']);
    (items[1].click as () => void)();
    expect(openRecent).toHaveBeenCalledWith('/m/b.onnx');
  });

  it("escapes '&' in recent paths (a mnemonic marker in menu labels) but opens the real path", () => {
    expect(menuLabelForPath('/m/R&D/a&&b.onnx')).toBe('/m/R&&D/a&&&&b.onnx');
    const { byId, openRecent } = make({ recent: ['/m/R&D/model.onnx'] });
    const [item] = byId(MENU_IDS.recent).submenu as MenuItemConstructorOptions[];
    expect(item.label).toBe('/m/R&&D/model.onnx');
    (item.click as () => void)();
    expect(openRecent).toHaveBeenCalledWith('/m/R&D/model.onnx');
  });

  it('File ▸ TensorRT Location… asks main (its folder dialog), not the page', () => {
    const chooseTrtLocation = vi.fn();
    const { byId, sendAction } = make({ chooseTrtLocation });
    const item = byId(MENU_IDS.trtLocation);
    expect(item.label).toBe('TensorRT Location…');
    (item.click as () => void)();
    expect(chooseTrtLocation).toHaveBeenCalledOnce();
    expect(sendAction).not.toHaveBeenCalled();
  });

  it('offers developer tools only in development', () => {
    expect(make({ isPackaged: true }).items.some((i) => i.role === 'toggleDevTools')).toBe(false);
    expect(make({ isPackaged: false }).items.some((i) => i.role === 'toggleDevTools')).toBe(true);
  });

  it('puts Quit in the File menu except on macOS, where the app menu has it', () => {
    expect(make({ isMac: false }).items.some((i) => i.role === 'quit')).toBe(true);
    const mac = make({ isMac: true }).items;
    expect(mac.some((i) => i.role === 'quit')).toBe(false);
    expect(mac[0].role).toBe('appMenu');
  });
});
