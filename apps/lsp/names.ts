// The names clients use to talk to this server: commands and custom notifications. No imports, so
// editor extensions can take them without pulling in the server.
export const COMMANDS = {
  build: 'trtBuildStudio.build',
  cancel: 'trtBuildStudio.cancel',
  list: 'trtBuildStudio.listBuilds',
  inspect: 'trtBuildStudio.inspect',
  backends: 'trtBuildStudio.backends',
  check: 'trtBuildStudio.checkEngine',
  explain: 'trtBuildStudio.explainEngine',
} as const;

/** Phase-tree snapshots of a running build (throttled), and a last one with the outcome. */
export const BUILD_VIEW_NOTIFICATION = 'trtBuildStudio/buildView';
/** Batches of the build's log lines (TensorRT's logger, or the simulator's). */
export const BUILD_LOG_NOTIFICATION = 'trtBuildStudio/buildLog';
