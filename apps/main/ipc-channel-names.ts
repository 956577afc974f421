// The IPC channel names, on their own: main registers them (ipc-channels.ts re-exports them with
// the payload schemas) and the preload's bundle includes them. This file imports nothing, so the
// bundle stays the names and nothing more.

/** renderer → main, request/response (ipcRenderer.invoke / ipcMain.handle). */
export const INVOKE = {
  listBackends: 'tbs:list-backends',
  readBuildRoutes: 'tbs:read-build-routes',
  openModel: 'tbs:open-model',
  openModelPath: 'tbs:open-model-path',
  recentModels: 'tbs:recent-models',
  takeOpenRequests: 'tbs:take-open-requests',
  chooseTimingCache: 'tbs:choose-timing-cache',
  /** Plugin libraries: main's dialog and main's per-model memory (plugin-choices.ts); the page only asks. */
  pluginLibraries: 'tbs:plugin-libraries',
  choosePluginLibraries: 'tbs:choose-plugin-libraries',
  forgetPluginLibrary: 'tbs:forget-plugin-library',
  startBuild: 'tbs:start-build',
  cancelBuild: 'tbs:cancel-build',
  listBuilds: 'tbs:list-builds',
  subscribe: 'tbs:subscribe',
  unsubscribe: 'tbs:unsubscribe',
  /** The page took an events message of a subscription (the stream's back-pressure: subscription-hub.ts). */
  ackStream: 'tbs:ack-stream',
  saveEngine: 'tbs:save-engine',
  listEngines: 'tbs:list-engines',
  deleteEngines: 'tbs:delete-engines',
  checkEngine: 'tbs:check-engine',
  compareBuilds: 'tbs:compare-builds',
  /** A build's layer information, as GET /api/builds/{id}/layers answers (the Engine view). */
  buildLayers: 'tbs:build-layers',
  showBuildFile: 'tbs:show-build-file',
} as const;

/** main → renderer, one way (webContents.send / ipcRenderer.on). */
export const PUSH = {
  buildStream: 'tbs:build-stream',
  openRequest: 'tbs:open-request',
  hostAction: 'tbs:host-action',
} as const;

export type InvokeChannel = (typeof INVOKE)[keyof typeof INVOKE];
export type PushChannel = (typeof PUSH)[keyof typeof PUSH];
export type IpcChannel = InvokeChannel | PushChannel;
