// bench:fold — what folding one event into the build view costs (apps/shared/build-view.ts, the
// fold serve, the page and the CLI each run on every event). A storm-shaped stream, as the
// simulated backend sends under bench:ui: eight builder threads under one chain of phases, each
// timing tactics ("Evaluating tactic times" with 153 steps, a "Measuring tactic time" of 4 steps
// started and finished per step), steps already coalesced to one per phase as the native flusher
// sends them. Nanoseconds per event, median of rounds, in this process. Prints one JSON object.
// Usage: npm run bench:fold [-- --events N --rounds N] [-- --against DIR]
// --against DIR folds the same stream with DIR's build view (DIR/dist/apps/shared/build-view.js:
// a checkout of earlier code, built there), alternating with ours, and prints the ratio.
import * as path from 'node:path';
import { BuildView } from '../apps/shared/build-view';
import type { BuildEvent } from '../apps/shared/protocol';
import { StreamWriter } from '../test/support/synthetic-build';

type ViewClass = new (buildId: string) => BuildView;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function stormEvents(total: number): BuildEvent[] {
  const w = new StreamWriter('bench');
  w.started();
  let parent: number | null = null;
  for (const name of ['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics', 'Timing graph nodes']) {
    const id = w.start(name, parent, 10);
    if (parent !== null) w.step(parent, 0);
    parent = id;
  }
  const chainLeaf = parent;
  const threads = Array.from({ length: 8 }, () => ({ evaluating: -1, step: 0 }));
  let leafStep = 0;
  while (w.events.length < total) {
    for (const th of threads) {
      if (th.evaluating < 0) {
        th.evaluating = w.start('Evaluating tactic times', chainLeaf, 153);
        th.step = 0;
      }
      const m = w.start('Measuring tactic time', th.evaluating, 4);
      w.step(m, 3);
      w.finish(m, 4);
      w.step(th.evaluating, th.step);
      if (++th.step === 153) {
        w.finish(th.evaluating, 153);
        th.evaluating = -1;
        if (leafStep < 9) w.step(chainLeaf as number, leafStep++);
      }
    }
  }
  return w.events;
}

function foldNs(View: ViewClass, events: readonly BuildEvent[]): number {
  const view = new View('bench');
  const t0 = process.hrtime.bigint();
  for (const ev of events) view.apply(ev, 0);
  const ns = Number(process.hrtime.bigint() - t0);
  if (view.fraction() <= 0) throw new Error('the fold saw no progress: the stream is not what this bench means');
  return ns / events.length;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const events = stormEvents(arg('events', 1_000_000));
  const rounds = Math.max(3, Math.floor(arg('rounds', 7)));
  const ours: ViewClass = BuildView;
  const againstDir = (() => {
    const i = process.argv.indexOf('--against');
    return i >= 0 ? path.resolve(process.argv[i + 1]) : undefined;
  })();
  const earlier = againstDir ? ((await import(path.join(againstDir, 'dist', 'apps', 'shared', 'build-view.js'))) as { BuildView: ViewClass }).BuildView : undefined;
  // A first round of each warms the JIT and is not counted.
  foldNs(ours, events);
  if (earlier) foldNs(earlier, events);
  const o: number[] = [];
  const e: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (earlier) e.push(foldNs(earlier, events));
    o.push(foldNs(ours, events));
  }
  const out: Record<string, unknown> = {
    bench: 'fold',
    events: events.length,
    rounds,
    nsPerEvent: { median: round(median(o)), min: round(Math.min(...o)), max: round(Math.max(...o)) },
  };
  if (earlier) {
    out.againstEarlier = {
      checkout: againstDir,
      note: 'alternating rounds in this process; ratio = ours / earlier',
      nsPerEvent: { ours: round(median(o)), earlier: round(median(e)), ratio: round(median(o) / median(e), 3) },
    };
  }
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

void main();
