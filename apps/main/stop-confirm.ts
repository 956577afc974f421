// The question asked before a quit or a window close would stop a running build. "Keep building"
// is the default and what Esc answers: a stray key must never cost a long build.
export interface MessageBoxDialog {
  showMessageBox(
    window: unknown,
    options: { type: 'warning'; message: string; detail: string; buttons: string[]; defaultId: number; cancelId: number; noLink: boolean },
  ): Promise<{ response: number }>;
}

export const KEEP_BUILDING = 0;
export const STOP_AND_QUIT = 1;

/** True when the user chose to stop the build and quit. */
export async function askStopRunningBuild(dialog: MessageBoxDialog, window: unknown, running: number): Promise<boolean> {
  const { response } = await dialog.showMessageBox(window, {
    type: 'warning',
    message: running > 1 ? `${running} builds are running.` : 'A build is running.',
    detail: 'Stop it and quit? TensorRT stops at its next step boundary and no engine is written for a stopped build.',
    buttons: ['Keep building', 'Stop and quit'],
    defaultId: KEEP_BUILDING,
    cancelId: KEEP_BUILDING,
    noLink: true,
  });
  return response === STOP_AND_QUIT;
}
