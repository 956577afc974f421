// `trt-build-studio worker --queue redis://host:port [--gpus all|0,2,3|sim:N] [--labels k=v,...]
// [--concurrency N] [--artifacts DIR] [--plugin-dir DIR ...]`: a farm worker on a GPU machine (one
// slot per GPU with --gpus). Runs until SIGINT/SIGTERM; then it stops taking builds, stops the
// running ones (reason "shutdown") and hands them back to the queue (or ends them failed, "worker
// shut down", on their last attempt: farm-worker.ts), lets that reach Redis, leaves the farm and
// exits 0 (a stop asked for is a clean end, as for serve). A second signal while that goes on
// kills the build workers by PID and exits (the handlers are the process's shared ones: see
// process/process-signals.ts).
import { parseArgs } from 'node:util';
import { LiveWorkers } from '../service/live-workers.js';
import { parsePluginDirs, type PluginPolicy } from '../service/plugin-libraries.js';
import { processSignals } from '../process/process-signals.js';
import { SharedFolderArtifacts } from './artifacts.js';
import { defaultWorkerId, FarmWorker } from './farm-worker.js';
import { parseGpus, type GpuSlot } from './gpu-slots.js';
import { formatLabels, parseLabels } from './labels.js';
import { redisUrlOk } from './redis.js';

export const WORKER_USAGE = `usage: trt-build-studio worker --queue redis://host:port [--gpus all|0,2,3|sim:N] [--labels k=v,...] [--concurrency N] [--artifacts DIR] [--plugin-dir DIR ...] [--id NAME]

  --queue URL        the farm's Redis (the same one \`serve --queue\` uses)
  --gpus G           one slot per GPU, each building one at a time on its own device, labelled
                     device=<n>: all (every GPU of the machine), a list (0,2,3), or sim:N (N
                     stand-in GPUs for the simulated backend, without TensorRT)
  --labels k=v,...   labels added to (or overriding) what the TensorRT probe found: gpu, cc, trt
  --concurrency N    builds at once (default 1: one build per GPU; not with --gpus)
  --artifacts DIR    shared artifact folder, mounted at the same path on every machine: engines
                     and per-(GPU, TensorRT version) timing caches go there
  --cache-lock M     build (default): no two machines merge into one timing cache at once: builds
                     sharing a cache run side by side on private copies and take the farm-wide
                     Redis lock only to publish into it. off: caches are used in place under the
                     file lock alone (filesystems whose locks work across machines)
  --plugin-dir DIR   a folder whose plugin libraries builds may name (staticPlugins, dynamicPlugins,
                     pluginsToSerialize); repeatable. Without it no build loads a plugin library:
                     the worker runs what remote clients ask for, and plugin libraries are code
  --id NAME          worker id (default: host-pid-random)
  --heartbeat-ms N   heartbeat TTL; serve calls the worker lost after this long without one (default 10000)
  --cancel-kill-ms N kill a build's worker process this long after Stop if it has not ended (default 10000)

Ctrl-C or SIGTERM stops taking builds, stops the running ones and hands them back to the queue
(another worker runs them if their retries allow; else they end failed, "worker shut down"),
leaves the farm and exits 0. A second signal kills the build workers at once.`;

/** A forced stop waits this long for the killed builds' ends to reach Redis, then exits anyway. */
const FORCE_EXIT_MS = 3000;

export async function runWorker(argv: string[]): Promise<number> {
  // Listening before anything else: a signal while the worker starts is kept and acted on once
  // it has (the start runs a backends query in a worker process of its own).
  const signals = processSignals();
  let firstSignal: NodeJS.Signals | undefined;
  let onFirst: ((sig: NodeJS.Signals) => void) | undefined;
  let onLater: ((sig: NodeJS.Signals) => void) | undefined;
  signals.listen((sig, n) => {
    if (n === 1) {
      firstSignal = sig;
      onFirst?.(sig);
    } else if (onLater) onLater(sig);
    else signals.hardExit(0);
  });
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        queue: { type: 'string' },
        labels: { type: 'string', multiple: true },
        concurrency: { type: 'string' },
        gpus: { type: 'string' },
        artifacts: { type: 'string' },
        id: { type: 'string' },
        'heartbeat-ms': { type: 'string' },
        'cancel-kill-ms': { type: 'string' },
        'cache-lock': { type: 'string' },
        'plugin-dir': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    return usage((e as Error).message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown option $1'));
  }
  if (values.help) {
    process.stdout.write(`${WORKER_USAGE}\n`);
    return 0;
  }
  if (!values.queue) return usage('--queue redis://host:port is required');
  let labels;
  let url;
  try {
    url = redisUrlOk(values.queue);
    labels = parseLabels((values.labels ?? []).join(','));
  } catch (e) {
    return usage((e as Error).message);
  }
  const int = (raw: string | undefined, min: number, max: number): number | undefined | null => {
    if (raw === undefined) return undefined;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) return null;
    return Number(raw);
  };
  const concurrency = int(values.concurrency, 1, 64);
  if (concurrency === null) return usage(`--concurrency: expected an integer from 1 to 64, got "${values.concurrency}"`);
  let slots: GpuSlot[] | undefined;
  if (values.gpus !== undefined) {
    if (concurrency !== undefined) return usage('--gpus gives one build per GPU slot: leave --concurrency out');
    try {
      slots = parseGpus(values.gpus);
    } catch (e) {
      return usage((e as Error).message);
    }
  }
  const hb = int(values['heartbeat-ms'], 300, 600_000);
  if (hb === null) return usage(`--heartbeat-ms: expected an integer from 300 to 600000, got "${values['heartbeat-ms']}"`);
  const killMs = int(values['cancel-kill-ms'], 100, 600_000);
  if (killMs === null) return usage(`--cancel-kill-ms: expected an integer from 100 to 600000, got "${values['cancel-kill-ms']}"`);

  const cacheLock = values['cache-lock'] ?? 'build';
  if (cacheLock !== 'build' && cacheLock !== 'off') return usage(`--cache-lock: expected build or off, got "${cacheLock}"`);
  let artifacts;
  if (values.artifacts) {
    artifacts = new SharedFolderArtifacts(values.artifacts);
    try {
      artifacts.ensure();
    } catch (e) {
      process.stderr.write(`trt-build-studio worker: --artifacts ${values.artifacts}: ${(e as Error).message}\n`);
      return 2;
    }
  }
  let pluginPolicy: PluginPolicy;
  try {
    // The artifact folder is where builds and clients write (engines, timing caches, uploads):
    // never a trusted plugin folder, nor inside or around one.
    const forbidden = artifacts ? [{ dir: artifacts.root, what: "the farm's artifact folder (engines, timing caches, uploads)" }] : [];
    pluginPolicy = parsePluginDirs(values['plugin-dir'] ?? [], { forbidden });
  } catch (e) {
    return usage((e as Error).message);
  }
  const workers = new LiveWorkers();
  signals.onHardExit(() => workers.killAll());
  const service = { ...(killMs === undefined ? {} : { cancelKillMs: killMs }), launcher: workers.launcher };
  const common = { url, labels, artifacts, heartbeatTtlMs: hb, cacheLock, service, pluginPolicy } as const;
  // One FarmWorker per GPU slot (each its own heartbeat, labels and one build at a time), or one.
  const baseId = values.id ?? defaultWorkerId();
  const farm = slots
    ? slots.map((s) => new FarmWorker({ ...common, id: `${baseId}-gpu${s.device}`, device: s.device, concurrency: 1 }))
    : [new FarmWorker({ ...common, id: baseId, concurrency })];
  // Set before start(): a second signal during the start kills its backends query too.
  onLater = (sig) => {
    onLater = () => signals.hardExit(0);
    // A second cancel kills a build's worker; the local service sees the exit and removes the
    // partial engine, and the build is handed back (or ends failed) as after the first signal.
    for (const w of farm) w.cancelAll('shutdown');
    const pids = workers.killAll();
    process.stderr.write(`trt-build-studio worker: ${sig} again: killed the build workers now (pids ${pids.join(', ') || 'none'})\n`);
    setTimeout(() => signals.hardExit(0), FORCE_EXIT_MS).unref();
  };
  try {
    await Promise.all(farm.map((w) => w.start()));
  } catch (e) {
    await Promise.all(farm.map((w) => w.stop().catch(() => undefined)));
    // Told to stop while starting: a start cut short by that (its backends query killed) is the
    // stop asked for, not a failure.
    if (firstSignal !== undefined) {
      process.stderr.write(`trt-build-studio worker: ${firstSignal} while starting; stopped\n`);
      return 0;
    }
    process.stderr.write(`trt-build-studio worker: could not start: ${(e as Error).message}\n`);
    return 1;
  }
  if (firstSignal === undefined) {
    for (const w of farm) process.stderr.write(`trt-build-studio worker: ${w.id} ready, labels ${formatLabels(w.labels)}, ${w.concurrency} at a time\n`);
    if (slots) process.stderr.write(`trt-build-studio worker: ${baseId} ready, ${slots.length} GPU slot(s)${slots[0].simulated ? ' (simulated GPUs)' : ''}\n`);
  }
  const signal = firstSignal ?? (await new Promise<NodeJS.Signals>((resolve) => (onFirst = resolve)));
  process.stderr.write(`trt-build-studio worker: ${signal}, stopping running builds, handing them back to the queue and leaving the farm (a second signal kills them now)…\n`);
  await Promise.all(farm.map((w) => w.stop(signal)));
  return 0;
}

function usage(msg: string): number {
  process.stderr.write(`trt-build-studio worker: ${msg}\n${WORKER_USAGE}\n`);
  return 2;
}
