// Build worker: one process, one build (or one backends query), then exit. Started by the
// service's WorkerLauncher as a Node child process, or by Electron main as a utilityProcess.
// A crash in native code ends this process only; the host reports the build as crashed.
import './ignore-terminal-interrupt.js';
import type { CancelReason } from '../shared/protocol.js';
import { describeZodError } from '../shared/protocol.js';
import { EventBatcher } from './event-batcher.js';
import { loadAddon } from './load-addon.js';
import { ParentToWorker, type WorkerToParent } from './messages.js';
import type { NativeBuildHandle } from './native-api.js';
import { connectToParent } from './parent-port.js';

/** After the host disappears, give the build this long to unwind before exiting anyway. */
const ORPHAN_EXIT_MS = 5000;

const link = connectToParent();
const send = (msg: WorkerToParent) => link.send(msg);
const batcher = new EventBatcher((events) => send({ type: 'events', events }));

let handle: NativeBuildHandle | undefined;
let started = false;
/** build.started has come out of the addon: from then on a cancel is forwarded at once. */
let nativeStarted = false;
let deferredCancel: CancelReason | undefined;
/** Cancel anyway if the addon never reports build.started (a stuck start must still be stoppable). */
const START_GRACE_MS = 2000;

async function exit(code: number): Promise<never> {
  batcher.flush();
  await link.drain();
  process.exit(code);
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
    handle = loadAddon().startBuild(request, (events) => {
      batcher.push(events);
      if (!nativeStarted && events.some((e) => e.type === 'build.started')) {
        nativeStarted = true;
        if (deferredCancel) handle?.cancel(deferredCancel);
      }
    });
  } catch (e) {
    fail(`could not start the build: ${(e as Error).message}`);
    return;
  }
  setTimeout(() => {
    nativeStarted = true;
    if (deferredCancel) handle?.cancel(deferredCancel);
  }, START_GRACE_MS).unref();
  handle.result.then(
    async (finished) => {
      batcher.flush();
      send({ type: 'result', finished });
      await exit(0);
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
      // A cancel that reaches the addon before its build thread reported build.started came out
      // as build.cancelling before build.started, or not at all (seen with the simulator). Holding
      // it until build.started keeps the stream in protocol order; it costs nothing later on.
      if (handle && nativeStarted) handle.cancel(msg.reason);
      else deferredCancel ??= msg.reason;
      break;
    case 'backends': {
      try {
        send({ type: 'backends', list: loadAddon().listBackends() });
      } catch (e) {
        send({ type: 'error', message: `could not load the native addon: ${(e as Error).message}` });
      }
      // A backends query is a worker's whole job unless a build was started with it.
      if (!started) void exit(0);
      break;
    }
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
