// Build worker: one process, one build (or one backends or build-routes query), then exit. Started by the
// service's WorkerLauncher as a Node child process, or by Electron main as a utilityProcess.
// A crash in native code ends this process only; the host reports the build as crashed.
import './ignore-terminal-interrupt.js';
import type { CancelReason } from '../shared/protocol.js';
import { describeZodError } from '../shared/protocol.js';
import { readFileSync } from 'node:fs';
import { encodeEventLines, type WireEvent } from '../shared/event-lines.js';
import { IpcBatcher } from './ipc-batcher.js';
import { gpuProbeWanted, LivenessAnnotator, readPeakRss } from './liveness.js';
import { loadAddon } from './load-addon.js';
import { favourEventPath } from '../process/event-path-priority.js';
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
// At most ACK_WINDOW batches go unacknowledged: the host acks each once it has taken it in and
// whoever paces the build (a --json stdout) has room. A host or reader that is behind makes the
// batcher wait and coalesce steps here instead of letting the channel's queue, or the host's
// memory, grow; a window of a few batches keeps a busy machine's round trips from throttling a
// reader that keeps up. Same for Electron's postMessage, which hands a message over at once.
const ACK_WINDOW = 4;
let unacked = 0;
let acked: (() => void) | undefined;
const batcher = new IpcBatcher((events) => {
  // As JSON text: the hot events' text made by the addon, the rest stringified here, on this
  // process's own core; parsed by the host in one go and passed on to SSE and --json readers
  // as it is (event-lines.ts).
  send({ type: 'eventLines', lines: encodeEventLines(events) });
  unacked++;
  paceNative();
  return unacked < ACK_WINDOW ? undefined : new Promise<void>((resolve) => (acked = resolve));
});

/**
 * This hop's bound in bytes (apps/shared/event-bytes.ts's estimate of the waiting events): past
 * HOLD_AT_BYTES the native layer is told to hold its batches (they wait in its outbox, steps
 * coalescing, compact outside the JS heap, and past the outbox's own bound the builder threads
 * wait: native/src/core/bounded_outbox.h) until the host's acks bring what waits here down to
 * RESUME_AT_BYTES. This process's memory then follows these bounds, not how long the reader
 * stalls nor when the collector runs. A cancel or a lost host ends the pacing for good: the
 * build's end must come through. (One native bite is at most 2,000 events, about 320 KiB.)
 */
const HOLD_AT_BYTES = 1024 * 1024;
const RESUME_AT_BYTES = 256 * 1024;
let held = false;
let pacing = true;
function paceNative(): void {
  if (!handle?.hold) return;
  const want = pacing && batcher.waitingBytes >= (held ? RESUME_AT_BYTES : HOLD_AT_BYTES);
  if (want !== held) {
    held = want;
    handle.hold(want);
  }
}
function stopPacing(): void {
  pacing = false;
  paceNative();
}

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
      {
        cpuUsage: () => process.cpuUsage(),
        openGpuProbe: addon.openGpuProbe,
        rssBytes: () => process.memoryUsage.rss(),
        peakRssBytes: () => readPeakRss(() => readFileSync('/proc/self/status', 'utf8')),
      },
      gpuProbeWanted(request.backend) ? (request.options.device ?? 0) : undefined,
    );
    const annotator = liveness;
    // The wire form where the addon has it: hot events come as their JSON text, made natively.
    const onEvents = (events: WireEvent[]) => {
      batcher.push(annotator.annotate(events));
      paceNative();
    };
    handle = addon.startWireBuild ? addon.startWireBuild(request, onEvents) : addon.startBuild(request, onEvents);
    // After the builder thread exists (it keeps the build's priority): this thread hands every
    // batch on, and must not wait behind the build for a core.
    favourEventPath();
  } catch (e) {
    fail(`could not start the build: ${(e as Error).message}`);
    return;
  }
  // The native layer orders build.cancelling after build.started and honours a cancel made
  // before the first step at that step, so an early cancel can go straight in.
  if (deferredCancel) {
    stopPacing();
    handle.cancel(deferredCancel);
  }
  handle.result.then(
    async (finished) => {
      liveness?.close();
      batcher.flush();
      // The same build.finished the last batch carried (with the memory peaks the annotator added).
      send({ type: 'result', finished: liveness?.finished?.seq === finished.seq ? liveness.finished : finished });
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
      if (handle) {
        stopPacing();
        handle.cancel(msg.reason);
      } else deferredCancel ??= msg.reason;
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
    case 'buildRoutes': {
      void (async () => {
        try {
          const addon = loadAddon();
          redirectStderrIfAsked(addon);
          if (typeof addon.readBuildRoutes !== 'function') throw new Error('this build of the addon cannot read build routes (rebuild it: npm run build:native)');
          send({ type: 'buildRoutes', json: await addon.readBuildRoutes() });
        } catch (e) {
          send({ type: 'error', message: (e as Error).message });
        }
        if (!started) void exitWhenReleased();
      })();
      break;
    }
    case 'release':
      release?.();
      break;
    case 'ack': {
      unacked = Math.max(0, unacked - 1);
      const resume = acked;
      acked = undefined;
      resume?.();
      break;
    }
  }
});

link.onDisconnect(() => {
  // The host died or closed the channel: no one can read our events, so stop the build.
  if (!handle) process.exit(0);
  stopPacing();
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
