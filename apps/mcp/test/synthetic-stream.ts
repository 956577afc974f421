// A synthetic event stream shaped like TENSORRT.md's trace of a real TensorRT 10 build: nested
// phases, repeated children, a parent that finishes early, a child that starts before its parent
// steps (so a naive estimate dips). Deterministic for a seed.
import type { BuildEvent, EventBody } from '../../shared/protocol.js';

export class StreamWriter {
  readonly events: BuildEvent[] = [];
  private seq = 0;
  private nextId = 1;
  t = 0;
  constructor(readonly buildId = 'b-test') {}

  push(body: EventBody, dt = 1): BuildEvent {
    this.t += dt;
    const ev = { v: 1, buildId: this.buildId, seq: this.seq++, t: this.t, ...body } as BuildEvent;
    this.events.push(ev);
    return ev;
  }

  start(name: string, parentId: number | null, nbSteps: number): number {
    const id = this.nextId++;
    this.push({ type: 'phase.start', id, parentId, name, nbSteps, instance: 0 });
    return id;
  }

  step(id: number, step: number): void {
    this.push({ type: 'phase.step', id, step, stepsDone: step + 1 });
  }

  finish(id: number, stepsDone: number, early = false): void {
    this.push({ type: 'phase.finish', id, stepsDone, early });
  }
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

export function tensorrtLikeStream(seed = 1, nodes = 12): BuildEvent[] {
  const r = rng(seed);
  const w = new StreamWriter();
  w.push({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }, 0);
  const root = w.start('Building engine', null, 6);
  const clone = w.start('Cloning network graph', root, 30);
  for (let i = 0; i < 30; i++) w.step(clone, i);
  w.finish(clone, 30);
  w.step(root, 0);
  const prep = w.start('Preparing graph for optimization', root, 4);
  for (let i = 0; i < 4; i++) w.step(prep, i);
  w.finish(prep, 4);
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
  w.push({ type: 'build.finished', status: 'succeeded', durationMs: w.t, engineBytes: 1234, outputPath: '/tmp/x.engine' });
  return w.events;
}
