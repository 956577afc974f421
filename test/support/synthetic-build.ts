// Synthetic event streams shaped like a real TensorRT 10 build (see docs/tensorrt.md), for unit
// tests of the store. Deterministic: a seeded generator, ids and seq assigned in order.
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
 * The MNIST-like build of TENSORRT.md: "Building engine" finishes early at 4 of 6, "Timing
 * graph nodes" has 12 nodes, each with `measures` "Measuring tactic time" instances.
 */
export function mnistLikeBuild(measuresPerNode = 90): StreamWriter {
  const w = new StreamWriter();
  w.started();
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
