// Build worker: one process, one build (or one backends query), then exit. Started by the
// service's WorkerLauncher as a Node child process, or by Electron main as a utilityProcess.
// A crash in native code ends this process only; the host reports the build as crashed.
import './ignore-terminal-interrupt.js';
import type { CancelReason } from '../shared/protocol.js';
import { describeZodError } from '../shared/protocol.js';
import { IpcBatcher } from './ipc-batcher.js';
import { gpuProbeWanted, LivenessAnnotator } from './liveness.js';
import { loadAddon } from './load-addon.js';
import { favourEventPath } from './event-path-priority.js';
import { ParentToWorker, type WorkerToParent } from './messages.js';
import type { NativeBuildHandle } from './native-api.js';
import { connectToParent } from './parent-port.js';
import { redirectStderrIfAsked } from './stderr-file.js';

/** After the host disappears, give the build this long to unwind before exiting anyway. */
/** How long a finished worker waits for the host's `release` before exiting anyway. */
const RELEASE_WAIT_MS = 3000;
const ORPHAN_EXIT_MS = 5000;

const link = connectToParent();
const send = (msg: WorkerToParent) => link.send(msg);
// Over a Node IPC channel the next batch waits until the previous one has left the process:
// a host that reads slowly then makes the batcher coalesce steps instead of letting the
// channel's write queue grow. (Electron's postMessage hands a message over at once.)
const batcher = new IpcBatcher((events) => {
  send({ type: 'events', events });
  return link.kind === 'node' ? link.drain() : undefined;
});

let handle: NativeBuildHandle | undefined;
let liveness: LivenessAnnotator | undefined;
let started = false;
/** A cancel that arrived before the start message; applied as soon as the build exists. */
let deferredCancel: CancelReason | undefined;

async function exit(code: number): Promise<never> {
  batcher.flush();
  await link.drain();
  process.exit(code);
}

/**
 * Exit once the host says it has what we sent. Electron's parentPort gives no delivery callback,
 * so a worker that exits right after postMessage could lose its result; the host's `release`
 * makes that impossible, and the timeout covers a host that never answers.
 */
let release: (() => void) | undefined;
async function exitWhenReleased(): Promise<never> {
  batcher.flush();
  await new Promise<void>((resolve) => {
    release = resolve;
    setTimeout(resolve, RELEASE_WAIT_MS).unref();
  });
  return exit(0);
}

function fail(message: string, code = 1): void {
  send({ type: 'error', message });
  void exit(code);
}

function start(request: Extract<ParentToWorker, { type: 'start' }>['request']): void {
  if (started) {
    send({ type: 'error', message: 'this worker already runs a build; start one worker per build' });
    return;
  }
  started = true;
  try {
    const addon = loadAddon();
    redirectStderrIfAsked(addon);
    liveness = new LivenessAnnotator(
      { cpuUsage: () => process.cpuUsage(), openGpuProbe: addon.openGpuProbe },
      gpuProbeWanted(request.backend) ? (request.options.device ?? 0) : undefined,
    );
    const annotator = liveness;
    handle = addon.startBuild(request, (events) => batcher.push(annotator.annotate(events)));
    // After the builder thread exists (it keeps the build's priority): this thread hands every
    // batch on, and must not wait behind the build for a core.
    favourEventPath();
  } catch (e) {
    fail(`could not start the build: ${(e as Error).message}`);
    return;
  }
  // The native layer orders build.cancelling after build.started and honours a cancel made
  // before the first step at that step, so an early cancel can go straight in.
  if (deferredCancel) handle.cancel(deferredCancel);
  handle.result.then(
    async (finished) => {
      liveness?.close();
      batcher.flush();
      send({ type: 'result', finished });
      await exitWhenReleased();
    },
    (e: unknown) => fail(`the build ended without a result: ${(e as Error)?.message ?? e}`),
  );
}

link.onMessage((raw) => {
  const parsed = ParentToWorker.safeParse(raw);
  if (!parsed.success) {
    // A malformed message means host and worker disagree on the protocol: refuse loudly.
    send({ type: 'error', message: `invalid message from host: ${describeZodError(parsed.error)}` });
    if (!started) void exit(2);
    return;
  }
  const msg = parsed.data;
  switch (msg.type) {
    case 'start':
      start(msg.request);
      break;
    case 'cancel':
      if (handle) handle.cancel(msg.reason);
      else deferredCancel ??= msg.reason;
      break;
    case 'backends': {
      void (async () => {
        try {
          const addon = loadAddon();
          redirectStderrIfAsked(addon);
          send({ type: 'backends', list: await addon.listBackends() });
        } catch (e) {
          send({ type: 'error', message: `could not load the native addon: ${(e as Error).message}` });
        }
        // A backends query is a worker's whole job unless a build was started with it.
        if (!started) void exitWhenReleased();
      })();
      break;
    }
    case 'release':
      release?.();
      break;
  }
});

link.onDisconnect(() => {
  // The host died or closed the channel: no one can read our events, so stop the build.
  if (!handle) process.exit(0);
  handle.cancel('shutdown');
  setTimeout(() => process.exit(0), ORPHAN_EXIT_MS).unref();
});

process.on('uncaughtException', (e) => {
  try {
    send({ type: 'error', message: `worker error: ${e.stack ?? e.message}` });
  } finally {
    void exit(70);
  }
});

send({ type: 'ready', pid: process.pid });
