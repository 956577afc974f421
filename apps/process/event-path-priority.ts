// Scheduling priority of the JS threads on the event path (the worker's, which hands the native
// batches on, and the service's, which writes them to subscribers), the JS half of
// native/src/core/thread_priority.h. On a busy machine (a TensorRT build fills the cores by
// itself) these threads wait for a core behind the builder's, and every event waits with them.
// Linux keeps the nice value per thread and new threads and processes inherit their creator's:
// a favoured thread publishes the build's own value in TBS_BUILD_NICE, and the native builder
// thread returns to it, so the build never runs favoured. Lowering a nice value needs root,
// CAP_SYS_NICE or RLIMIT_NICE; without them nothing changes ("where the OS allows").
import * as os from 'node:os';

/** Nice steps the event path runs ahead of the build (as kEventPathBoost natively). */
export const EVENT_PATH_BOOST = 5;

/** The nice value builds run at: TBS_BUILD_NICE when a host set it, else the calling thread's. */
export function buildNice(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.TBS_BUILD_NICE);
  if (env.TBS_BUILD_NICE && Number.isInteger(v) && v >= -20 && v <= 19) return v;
  return os.getPriority();
}

/**
 * Runs the calling thread EVENT_PATH_BOOST steps ahead of the build where the OS allows, after
 * recording the build's value in env.TBS_BUILD_NICE for the processes started later. Returns
 * whether the thread now runs favoured.
 */
export function favourEventPath(env: NodeJS.ProcessEnv = process.env): boolean {
  const build = buildNice(env);
  env.TBS_BUILD_NICE = String(build);
  const want = Math.max(-20, build - EVENT_PATH_BOOST);
  try {
    if (os.getPriority() > want) os.setPriority(want);
    return os.getPriority() <= want;
  } catch {
    return false;
  }
}
