import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { APP_ID, APP_NAME, DESKTOP_NAME, applyIdentity } from '../app-identity.js';

const yaml = require('js-yaml') as { load(s: string): unknown };
const ROOT = path.resolve(__dirname, '../../..');

describe('desktop identity', () => {
  it('is the one package.json and electron-builder.yml declare', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { productName: string; desktopName: string };
    const cfg = yaml.load(readFileSync(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as { appId: string; productName: string };
    expect(APP_NAME).toBe(pkg.productName);
    expect(APP_NAME).toBe(cfg.productName);
    expect(DESKTOP_NAME).toBe(pkg.desktopName);
    expect(APP_ID).toBe(cfg.appId);
  });

  it('names the app and sets the Linux desktop name (the window app id); the AppUserModelID only on Windows', () => {
    const make = () => {
      let name = 'Electron';
      return { getName: () => name, setName: vi.fn((n: string) => void (name = n)), setDesktopName: vi.fn(), setAppUserModelId: vi.fn() };
    };
    const linux = make();
    applyIdentity(linux, 'linux');
    expect(linux.getName()).toBe('TRT Build Studio');
    expect(linux.setDesktopName).toHaveBeenCalledWith('trt-build-studio.desktop');
    expect(linux.setAppUserModelId).not.toHaveBeenCalled();
    const win = make();
    applyIdentity(win, 'win32');
    expect(win.setAppUserModelId).toHaveBeenCalledWith('dev.trt-build-studio.app');
    expect(win.setDesktopName).not.toHaveBeenCalled();
  });
});
