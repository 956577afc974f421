// Synthetic event streams shaped like a real TensorRT 10 build (see docs/tensorrt.md), for unit
// tests of every surface (the UI store, the CLI, MCP and LSP progress, the cross-surface contract
// test). Deterministic: a seeded generator, ids and seq assigned in order.
import type { BuildEvent, EventBody } from '../../apps/shared/protocol.js';

export class StreamWriter {
  readonly events: BuildEvent[] = [];
  private seq = 0;
  private nextId = 1;
  t = 0;
  private readonly instances = new Map<string, number>();

  constructor(readonly buildId = 'b1') {}

  emit(body: EventBody, dt = 1): BuildEvent {
    this.t += dt;
    const ev = { v: 1, buildId: this.buildId, seq: this.seq++, t: this.t, ...body } as BuildEvent;
    this.events.push(ev);
    return ev;
  }

  /** Skips seq numbers, as coalesced steps do in transit. */
  skip(n: number): void {
    this.seq += n;
  }

  started(simulated = true): void {
    this.emit({ type: 'build.started', backend: simulated ? 'simulated' : 'tensorrt', backendVersion: 'sim-1', simulated });
  }

  start(name: string, parentId: number | null, nbSteps: number): number {
    const id = this.nextId++;
    const key = `${parentId}/${name}`;
    const instance = this.instances.get(key) ?? 0;
    this.instances.set(key, instance + 1);
    this.emit({ type: 'phase.start', id, parentId, name, nbSteps, instance });
    return id;
  }

  step(id: number, step: number): void {
    this.emit({ type: 'phase.step', id, step, stepsDone: step + 1 });
  }

  finish(id: number, stepsDone: number, early = false): void {
    this.emit({ type: 'phase.finish', id, stepsDone, early });
  }

  /** A phase with all its steps, then finished. */
  full(name: string, parentId: number | null, nbSteps: number, inside?: (id: number) => void): number {
    const id = this.start(name, parentId, nbSteps);
    inside?.(id);
    for (let s = 0; s < nbSteps; s++) this.step(id, s);
    this.finish(id, nbSteps);
    return id;
  }

  finished(status: 'succeeded' | 'cancelled' | 'failed' | 'crashed', extra: Record<string, unknown> = {}): void {
    this.emit({ type: 'build.finished', status, durationMs: this.t, ...extra } as EventBody);
  }
}

/**
 * TensorRT's phase tree (docs/tensorrt.md) up to the first graph node: "Building engine" past its
 * clone and prepare steps, the subgraph's "Optimizing graph" ended early at 28 of 33, then
 * "Computing profile costs" › "Timing tactics" › "Timing graph nodes" (12 nodes) open.
 */
export function openTrtTree(w: StreamWriter): { root: number; sub: number; costs: number; tactics: number; nodes: number } {
  const root = w.start('Building engine', null, 6);
  w.full('Cloning network graph', root, 30);
  w.step(root, 0);
  w.full('Preparing graph for optimization', root, 4);
  w.step(root, 1);
  const sub = w.start('Building engine from subgraph', root, 1);
  const opt = w.start('Optimizing graph', sub, 33);
  for (let s = 0; s < 28; s++) w.step(opt, s);
  w.finish(opt, 28, true);
  const costs = w.start('Computing profile costs', sub, 10);
  const tactics = w.start('Timing tactics', costs, 3);
  const nodes = w.start('Timing graph nodes', tactics, 12);
  return { root, sub, costs, tactics, nodes };
}

/**
 * The MNIST-like build of TENSORRT.md: "Building engine" finishes early at 4 of 6, "Timing
 * graph nodes" has 12 nodes, each with `measures` "Measuring tactic time" instances.
 */
export function mnistLikeBuild(measuresPerNode = 90): StreamWriter {
  const w = new StreamWriter();
  w.started();
  const { root, sub, costs, tactics, nodes } = openTrtTree(w);
  for (let n = 0; n < 12; n++) {
    w.full('Evaluating tactic times', nodes, 1, (ev) => {
      for (let m = 0; m < measuresPerNode; m++) w.full('Measuring tactic time', ev, m % 2 ? 2 : 4);
    });
    w.step(nodes, n);
  }
  w.finish(nodes, 12);
  w.step(tactics, 0);
  w.finish(tactics, 1, true);
  w.step(costs, 1);
  // A parent advances while its child is open.
  const refit = w.start('Determining refit engines', costs, 5);
  w.step(costs, 3);
  for (let s = 0; s < 5; s++) w.step(refit, s);
  w.finish(refit, 5);
  w.finish(costs, 4, true);
  w.step(sub, 0);
  w.finish(sub, 1);
  w.step(root, 3);
  w.finish(root, 4, true);
  return w;
}

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

export interface TensorrtLikeOptions {
  /** How many graph nodes "Timing graph nodes" times. */
  nodes?: number;
  /** End the stream there: a crash (worker died mid-timing) or a cancel, instead of success. */
  end?: 'succeeded' | 'crashed' | 'cancelled';
  /** Build time between two events, ms. */
  dt?: number;
  buildId?: string;
}

/**
 * A TensorRT-like build: nested phases, repeated children, a parent that finishes early, a child
 * that starts before its parent steps (so a naive estimate dips). Deterministic for a seed.
 * `end: 'crashed'` stops half way through timing the nodes with a crashed build.finished that
 * carries lastPhasePath (as the service reports it from the crash record); `end: 'cancelled'` has
 * a build.cancelling, the open phases unwinding early, then a cancelled build.finished.
 */
export function tensorrtLikeStream(seed = 1, nodesOrOpts: number | TensorrtLikeOptions = 12): BuildEvent[] {
  const o = typeof nodesOrOpts === 'number' ? { nodes: nodesOrOpts } : nodesOrOpts;
  const nodes = o.nodes ?? 12;
  const end = o.end ?? 'succeeded';
  const dt = o.dt ?? 1;
  const r = rng(seed);
  const w = new StreamWriter(o.buildId ?? 'b-test');
  const emit = w.emit.bind(w);
  w.emit = (body: EventBody, d = dt) => emit(body, d);
  w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }, 0);
  const root = w.start('Building engine', null, 6);
  w.full('Cloning network graph', root, 30);
  w.step(root, 0);
  w.full('Preparing graph for optimization', root, 4);
  w.step(root, 1);
  const sub = w.start('Building engine from subgraph', root, 1);
  const opt = w.start('Optimizing graph', sub, 33);
  for (let i = 0; i < 28; i++) w.step(opt, i);
  w.finish(opt, 28, true);
  const costs = w.start('Computing profile costs', sub, 10);
  const timing = w.start('Timing tactics', costs, 3);
  const graphNodes = w.start('Timing graph nodes', timing, nodes);
  for (let n = 0; n < nodes; n++) {
    const evalSteps = 1 + Math.floor(r() * 6);
    const evaluate = w.start('Evaluating tactic times', graphNodes, evalSteps);
    for (let e = 0; e < evalSteps; e++) {
      const measure = w.start('Measuring tactic time', evaluate, 4);
      for (let m = 0; m < 4; m++) w.step(measure, m);
      w.finish(measure, 4);
      w.step(evaluate, e);
    }
    w.finish(evaluate, evalSteps);
    w.step(graphNodes, n);
    if (n === Math.floor(nodes / 2) && end !== 'succeeded') {
      if (end === 'crashed') {
        // The worker dies: nothing unwinds, the service reports where it was.
        w.emit({ type: 'log', severity: 'error', message: 'build worker exited with signal SIGSEGV' });
        w.finished('crashed', {
          error: 'the build worker died (signal SIGSEGV)',
          lastPhasePath: ['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics', 'Timing graph nodes'],
        });
      } else {
        w.emit({ type: 'build.cancelling', requestedAt: w.t, reason: 'user' });
        for (const [id, done] of [
          [graphNodes, n + 1],
          [timing, 0],
          [costs, 0],
          [sub, 0],
          [root, 2],
        ] as const)
          w.finish(id, done, true);
        w.finished('cancelled', { cancelLatencyMs: 0.4, stopToFinishMs: 3 });
      }
      return w.events;
    }
  }
  w.finish(graphNodes, nodes);
  w.step(timing, 0);
  w.finish(timing, 1, true);
  // The parent advances while a child is still open, as in the real trace.
  const refit = w.start('Determining refit engines', costs, 5);
  for (let i = 2; i < 4; i++) w.step(costs, i);
  for (let i = 0; i < 5; i++) w.step(refit, i);
  w.finish(refit, 5);
  w.finish(costs, 10, true);
  w.step(sub, 0);
  w.finish(sub, 1);
  w.step(root, 2);
  w.step(root, 3);
  w.finish(root, 4, true);
  w.finished('succeeded', { engineBytes: 1234, outputPath: '/tmp/x.engine' });
  return w.events;
}
