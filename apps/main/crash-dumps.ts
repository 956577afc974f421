// Crash reports kept on this machine only. Electron's crashReporter (Crashpad) writes a minidump
// for a crash of any of the app's processes (main, renderer, GPU, the build workers) into
// app.getPath('crashDumps') (on Linux ~/.config/TRT Build Studio/Crashpad, under "completed" or
// "pending"). Nothing is uploaded: uploadToServer is false, so no submitURL is needed, and a dump
// leaves the machine only if the user attaches it to a report.
// Must run before 'ready' so that the processes Chromium starts are covered too.
export interface CrashReporterLike {
  start(options: { uploadToServer: boolean; compress?: boolean; ignoreSystemCrashHandler?: boolean }): void;
}

/** Starts local-only crash dumps; returns the folder they go to, for the log. */
export function startLocalCrashDumps(crashReporter: CrashReporterLike, dumpsFolder: () => string): string {
  crashReporter.start({ uploadToServer: false, compress: true });
  return dumpsFolder();
}
