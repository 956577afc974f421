// `build <model> -o <engine>`: runs one build through the build service (in its own worker
// process) and renders its events: a live tree on a terminal, plain lines otherwise, NDJSON with
// --json. SIGINT/SIGTERM cancel at the next step; a second one kills the worker.
import { createBuildService } from '../../service/build-service.js';
import type { BuildFinished } from '../../shared/protocol.js';
import { BUILD_HELP, parseBuildArgs } from '../build-args.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { PlainRenderer } from '../render/plain-renderer.js';
import type { BuildRenderer } from '../render/renderer.js';
import { TtyRenderer } from '../render/tty-renderer.js';

export { BUILD_HELP };

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

export async function runBuild(argv: string[]): Promise<number> {
  const cmd = parseBuildArgs(argv);
  if (cmd.help) {
    process.stdout.write(BUILD_HELP);
    return 0;
  }
  const renderer: BuildRenderer = cmd.json ? new JsonRenderer() : process.stdout.isTTY ? new TtyRenderer() : new PlainRenderer();
  // Build farm: the same live view and Stop, with the build running on a worker machine.
  const service = cmd.queue ? await (await import('../../farm/serve-queue.js')).createServeService({ queue: cmd.queue, quiet: true }) : createBuildService();
  let signals = 0;
  let buildId: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (!buildId) {
      // Still validating: nothing runs yet, so stop right away.
      process.exit(130);
    }
    renderer.stopping(signals === 1 ? 'cancel' : 'kill', signal);
    service.cancelBuild(buildId, 'user');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `build --json | head`: the reader left. Stop the build (nothing half-written) instead of
  // dying on EPIPE with a worker still running.
  const onStdoutError = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (buildId) service.cancelBuild(buildId, 'user');
    else process.exit(1);
  };
  process.stdout.on('error', onStdoutError);
  const restoreCursor = () => (renderer as TtyRenderer).dispose?.();
  process.on('exit', restoreCursor);
  try {
    const record = await service.startBuild(cmd.input);
    buildId = record.id;
    renderer.begin(record);
    // afterSeq -1: replay whatever arrived before subscribing (seqs start at 0), so nothing is missed.
    const sub = service.subscribe(record.id, (events) => renderer.events(events), { afterSeq: -1 });
    const finished = await service.waitForResult(record.id);
    // Deliveries are queued behind the subscription's replay; let them drain before the summary.
    await new Promise((r) => setImmediate(r));
    sub.unsubscribe();
    renderer.end(finished);
    return exitCodeFor(finished);
  } finally {
    await service.shutdown();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.stdout.off('error', onStdoutError);
  }
}
