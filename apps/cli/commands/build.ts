// `build <model> -o <engine>`: runs one build through the build service (in its own worker
// process) and renders its events: a live tree on a terminal, plain lines otherwise, NDJSON with
// --json. The command returns only once stdout has taken everything it wrote.
//
// Signals (SIGINT/SIGTERM), whenever they come; the handlers are the process's own
// (process/process-signals.ts), in place before this module loads and until the process is gone:
// - first: cancel at the next step; before the build exists, it starts already cancelled. The
//   output ends with the build's ending (with --json, build.finished is the last line); exit 130;
// - second: the service kills the build's worker, its partial output is removed, the output
//   still ends with the build's ending; before the build exists, exit 130 at once (any worker
//   the command started is killed first), with --json after a build.finished that stands for no
//   build (buildId "", see noBuildFinished);
// - third and later: with --queue (the build runs on a farm machine, which has both requests),
//   exit 130 at once; locally the ending of the killed worker follows within moments;
// - once the build's ending is known (its result is in, stdout is being flushed to a reader that
//   may be slow): exit at once with the build's own code, any worker still there killed first.
// The heavier modules (service, protocol schemas, renderers) load only after the listener is in
// place.
import type { StartBuildInput } from '../../service/api.js';
import type { BackendInfo, BuildFinished, BuildOptionsInput } from '../../shared/protocol.js';
import { LiveWorkers } from '../../service/live-workers.js';
import { processSignals, type ProcessSignals } from '../../process/process-signals.js';
import type { BuildRenderer } from '../render/renderer.js';
import { followIntoRenderer } from '../render/follow.js';
import { RunStop, runBuild as runSharedBuild } from '../../surface/run-build.js';
import type { TtyRenderer } from '../render/tty-renderer.js';
import type { ShapesError } from '../../service/build-validation.js';

export function exitCodeFor(f: BuildFinished): number {
  switch (f.status) {
    case 'succeeded':
      return 0;
    case 'cancelled':
      return 130;
    default:
      return 1;
  }
}

/** Resolves once everything written to `out` so far has been handed to the OS (or `out` failed). */
function streamFlushed(out: NodeJS.WritableStream & { destroyed?: boolean }): Promise<void> {
  if (out.destroyed) return Promise.resolve();
  // An empty write's callback runs after every write queued before it.
  return new Promise((resolve) => out.write('', () => resolve()));
}

function makeRenderer(json: boolean, onReaderGone: () => void): BuildRenderer {
  if (json) {
    const { JsonRenderer } = require('../render/json-renderer.js') as typeof import('../render/json-renderer.js');
    return new JsonRenderer(process.stdout, onReaderGone);
  }
  if (process.stdout.isTTY) {
    const { TtyRenderer } = require('../render/tty-renderer.js') as typeof import('../render/tty-renderer.js');
    return new TtyRenderer();
  }
  const { PlainRenderer } = require('../render/plain-renderer.js') as typeof import('../render/plain-renderer.js');
  return new PlainRenderer();
}

/**
 * With --json the stream always ends with build.finished, even when the command stops before a
 * build exists (a second signal while the model is still being read). That line stands for no
 * build: its buildId is "" (ids are never empty), its seq 0, and its status cancelled. The native
 * launcher (native/launcher/launcher.cc) writes the same line when Node dies of a signal before
 * its first line; apps/cli/test/launcher.test.ts checks the two are byte-equal.
 */
export function noBuildFinished(durationMs: number): BuildFinished {
  return { v: 1, buildId: '', seq: 0, t: durationMs / 1000, type: 'build.finished', status: 'cancelled', durationMs };
}

/**
 * The --json line for a command that ends on an input error before a build exists: a
 * build.finished that stands for no build (as noBuildFinished), status failed, the error as the
 * terminal would show it (a shapes suggestion in this command's own flags).
 */
export function inputErrorFinished(e: unknown, durationMs: number): BuildFinished {
  const shapes = typeof (e as Partial<ShapesError>)?.restate === 'function' ? (e as ShapesError) : undefined;
  const { buildShapesSuggestion } = require('../build-args.js') as typeof import('../build-args.js');
  const message = shapes ? shapes.restate(buildShapesSuggestion) : e instanceof Error ? e.message : String(e);
  return { ...noBuildFinished(durationMs), status: 'failed', error: message };
}

function writeJsonLine(event: BuildFinished): void {
  try {
    require('node:fs').writeSync(1, `${JSON.stringify(event)}\n`);
  } catch {
    // The reader is gone: nothing to end.
  }
}

/**
 * What the signals and the reader asked for: the run's stop requests (apps/surface/run-build.ts
 * sends those that came before the build had an id as soon as it has one), and what this command
 * does about them at the terminal (announce, exit at once).
 */
class StopRequests {
  /** The signal the first stop came with (the stderr line names it). */
  private firstSignal: NodeJS.Signals | undefined;
  /** The stop was already announced on stderr (by onSignal, when the renderer existed). */
  private announced = false;
  /** --json: the output must end with a build.finished line whatever happens. */
  json = false;
  readonly startedAt = Date.now();
  renderer: BuildRenderer | undefined;
  /** Every worker this command started: killed by PID when it must exit at once. */
  readonly workers = new LiveWorkers();
  /** The run's stop requests: signals and a reader that left. */
  readonly run = new RunStop(undefined, {
    // The build exists now: say the stop that came before it, then the run sends it.
    attached: () => {
      if (this.firstSignal && !this.announced) this.renderer?.stopping('cancel', this.firstSignal);
    },
  });

  /** The build runs on a farm machine (--queue): no worker of ours to wait for. */
  remote = false;

  /** The build's ending, once known (ended()). */
  private finished: BuildFinished | undefined;

  constructor(private readonly hub: ProcessSignals) {
    hub.onHardExit(() => this.workers.killAll());
    // A signal between the ending being known and its line being written still ends the stream with it.
    hub.onHardExit(() => {
      if (this.finished && !this.readerGone) this.renderer?.exitNow?.(this.finished);
    });
  }

  get buildId(): string | undefined {
    return this.run.buildId;
  }

  get readerGone(): boolean {
    return this.run.asked('reader');
  }

  onSignal = (signal: NodeJS.Signals): void => {
    const n = this.run.count('signal') + 1;
    if (!this.buildId && n > 1) {
      // Still reading the model and a second request: no build runs yet, so stop right away,
      // the --json stream still ending with its build.finished (written synchronously: the
      // process ends on this line, and nothing else of the build was written yet).
      if (this.json && !this.readerGone) writeJsonLine(noBuildFinished(Date.now() - this.startedAt));
      this.hub.hardExit(130);
    }
    if (n > 2) {
      // A local worker is being killed: its ending (and the removal of its partial output)
      // follows within moments. A farm build's ending may never come if the farm is gone.
      this.run.request('user', 'signal', { send: false });
      if (this.remote) this.hub.hardExit(130);
      return;
    }
    this.firstSignal ??= signal;
    if (this.renderer) {
      this.renderer.stopping(n === 1 ? 'cancel' : 'kill', signal);
      this.announced = true;
    }
    // Before the build is accepted the cancel waits for the run: the build then starts already
    // cancelled, and the output still ends with its build.finished.
    this.run.request('user', 'signal');
  };

  /** `build --json | head`: the reader left. Stop the build (nothing half-written) quietly. */
  onReaderGone = (): void => {
    if (this.readerGone) return;
    // Before the build exists, only when no signal asked already (a second cancel kills the worker).
    this.run.request('user', 'reader', { ifAlone: true });
  };

  onStdoutError = (err: NodeJS.ErrnoException): void => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') this.onReaderGone();
    else process.stderr.write(`trt-build-studio build: cannot write to stdout: ${err.message}\n`);
  };

  /** The build's ending is known: a signal from now on exits with its code. */
  ended(finished: BuildFinished): void {
    this.finished = finished;
    this.hub.exitOnSignal(exitCodeFor(finished));
  }
}

/**
 * Checks options against the backends found, before the build starts (usage errors). It may
 * return the options to build with instead (trtexec's --best, whose precisions depend on them).
 */
type OptionCheck = (options: BuildOptionsInput, backends: BackendInfo[]) => BuildOptionsInput | void;

const BUILD_LAYER_WORDS = { command: 'build', dumpFlag: '--dump-layer-info', exportFlag: '--export-layer-info' };

export async function runBuild(argv: string[]): Promise<number> {
  // Known before the arguments are parsed (a signal may come while they are), settled after.
  return withStopHandling(argv.includes('--json'), async (stop) => {
    const { checkCliOptions, parseBuildArgs, versionedBuildHelp } = require('../build-args.js') as typeof import('../build-args.js');
    const cmd = parseBuildArgs(argv);
    if (cmd.help) {
      process.stdout.write(await versionedBuildHelp());
      return 0;
    }
    stop.json = cmd.json;
    const code = await buildAndFollow(stop, cmd.input, cmd.json, checkCliOptions, cmd.queue);
    if (code !== 0 || !cmd.layerInfo) return code;
    const { layerInfoAfterBuild } = require('../layer-info-export.js') as typeof import('../layer-info-export.js');
    return layerInfoAfterBuild(cmd.input.outputPath, cmd.layerInfo, cmd.json, BUILD_LAYER_WORDS);
  });
}

/**
 * Runs a parsed build (also for `trtexec`). `check` sees the backends first, so an option the
 * TensorRT version in use lacks is a usage error in the calling command's own spelling.
 */
export async function runBuildInput(input: StartBuildInput, json: boolean, check: OptionCheck): Promise<number> {
  return withStopHandling(json, (stop) => buildAndFollow(stop, input, json, check));
}

/**
 * Signal and broken-pipe handling around a command, and the final flush of stdout. `json` is
 * set before listening: the signals that came while Node was still loading are handed over
 * inside listen(), and two of them end the process there, whose --json output must still end
 * with its build.finished line.
 */
async function withStopHandling(json: boolean, body: (stop: StopRequests) => Promise<number>): Promise<number> {
  const signals = processSignals();
  const stop = new StopRequests(signals);
  stop.json = json;
  signals.listen(stop.onSignal);
  // EPIPE without a listener would be thrown as an uncaught error with a stack trace.
  process.stdout.on('error', stop.onStdoutError);
  try {
    return await body(stop);
  } catch (e) {
    // An input error before any build exists (a bad flag, a refused model): an agent or CI job
    // reading --json still gets JSON, the contract's last line, and the exit code stays main's.
    if (stop.json && !stop.buildId && !stop.readerGone) writeJsonLine(inputErrorFinished(e, Date.now() - stop.startedAt));
    throw e;
  } finally {
    // Return only once a slow reader has everything: the caller's process.exit() would cut it.
    // A signal meanwhile ends the wait (and the process) with the build's code (ended()).
    await (stop.renderer?.flushed?.() ?? Promise.resolve());
    await streamFlushed(process.stdout);
    process.stdout.off('error', stop.onStdoutError);
  }
}

async function buildAndFollow(stop: StopRequests, input: StartBuildInput, json: boolean, check: OptionCheck, queue?: string): Promise<number> {
  const { createBuildService } = require('../../service/build-service.js') as typeof import('../../service/build-service.js');
  // The command follows its one build from the start (afterSeq -1): it needs no long replay log
  // nor a big snapshot tree, and a long build should not make it hold them. With --queue (build
  // farm) the same live view and Stop, with the build running on a worker machine.
  const service = queue
    ? await (await import('../../farm/serve-queue.js')).createServeService({ queue, quiet: true, who: 'trt-build-studio build' })
    : createBuildService({ retainEvents: 1000, launcher: stop.workers.launcher });
  stop.remote = queue !== undefined;
  const r = (stop.renderer = makeRenderer(json, stop.onReaderGone));
  const restoreCursor = () => (r as TtyRenderer).dispose?.();
  process.on('exit', restoreCursor);
  try {
    const checked = check(input.options ?? {}, await service.listBackends());
    const { finished } = await runSharedBuild(service, checked ? { ...input, options: checked } : input, {
      stop: stop.run,
      startStopped: true,
      onStarted: (record) => r.begin(record),
      follow: (record) => followIntoRenderer(service, record.id, r),
      onEnded: (f) => stop.ended(f),
      // Deliveries are queued behind the subscription's replay, and, while the renderer is behind
      // (back-pressure), in the subscription: each time the renderer has room the subscription
      // hands over what waits, until build.finished is through.
      drain: async (live) => {
        for (let room = r.backpressure?.(); room && !live.finished; room = r.backpressure?.()) await room;
        await new Promise((res) => setImmediate(res));
      },
    });
    r.end(finished);
    return exitCodeFor(finished);
  } finally {
    await service.shutdown();
  }
}
