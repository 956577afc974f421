// Who the app is to the desktop. On Linux the window's app id (Wayland) / WM_CLASS (X11) is the
// desktop name without ".desktop"; it must equal the installed .desktop file's name and its
// StartupWMClass, or the desktop shows a generic icon and a second dock entry. The notification
// server labels our notifications with the app name. package.json carries the same values
// (productName, desktopName), which Electron reads at start; setting them here as well covers a
// start without that package.json (`electron dist/apps/main/main.js`). packaging.test.ts and
// app-identity.test.ts keep the three places in agreement.
export const APP_NAME = 'TRT Build Studio';
export const DESKTOP_NAME = 'trt-build-studio.desktop';
/** electron-builder's appId: the AppUserModelID on Windows (notifications, taskbar grouping). */
export const APP_ID = 'dev.trt-build-studio.app';

export interface IdentityApp {
  getName(): string;
  setName(name: string): void;
  setDesktopName?(name: string): void;
  setAppUserModelId?(id: string): void;
}

/** Must run before 'ready': Electron reads the desktop name when it creates the first window. */
export function applyIdentity(app: IdentityApp, platform: NodeJS.Platform = process.platform): void {
  if (app.getName() !== APP_NAME) app.setName(APP_NAME);
  if (platform === 'linux') app.setDesktopName?.(DESKTOP_NAME);
  if (platform === 'win32') app.setAppUserModelId?.(APP_ID);
}
