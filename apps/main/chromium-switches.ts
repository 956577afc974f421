// Chromium command-line switches the app needs, appended before 'ready'.
export interface CommandLineLike {
  appendSwitch(name: string, value?: string): void;
}

export function applyChromiumSwitches(commandLine: CommandLineLike, platform: NodeJS.Platform = process.platform): void {
  if (platform === 'linux') {
    // The file dialogs go through the desktop's file-chooser portal. Electron uses it only from
    // version 4 on for `defaultPath` to work, but by default takes any version: on desktops with
    // an older portal (Ubuntu 22.04) the dialog then ignores the folder we ask it to open in.
    // Requiring version 4 makes Electron fall back to the GTK dialog there, which honours it.
    commandLine.appendSwitch('xdg-portal-required-version', '4');
  }
}
