// The renderers after a stream reset: the stream contract may start a subscriber over from a view
// snapshot (the events up to its seq are no longer kept). Each renderer is fed the way the build
// command feeds it (through the shared LiveView): the first part of a TensorRT-like build, a
// reset to the view at a later seq, then the rest. What it shows from there must be what a
// renderer that saw every event shows.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BuildView, type BuildViewSnapshot } from '../../shared/build-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';
import { LiveView } from '../../shared/live-view.js';
import { tensorrtLikeStream } from '../../../test/support/synthetic-build.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { PlainRenderer } from '../render/plain-renderer.js';
import { rendererHandlers } from '../render/follow.js';
import type { BuildRenderer } from '../render/renderer.js';
import { TtyRenderer } from '../render/tty-renderer.js';

const record = {
  id: 'b-test',
  state: 'running',
  modelPath: '/m.onnx',
  outputPath: '/tmp/x.engine',
  options: { backend: 'simulated' },
  queuedAt: '',
  lastSeq: -1,
  engineAvailable: false,
  backend: 'simulated',
  backendVersion: 'sim-1',
} as unknown as BuildRecord;

function sink(): { out: NodeJS.WriteStream; text: () => string } {
  const out = Object.assign(new PassThrough(), { columns: 200, rows: 200 });
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  return { out: out as unknown as NodeJS.WriteStream, text: () => text };
}

/** The stream, cut where the gap starts and ends, and the view at the end of the gap. */
function withGap(events: BuildEvent[], from: number, to: number): { before: BuildEvent[]; after: BuildEvent[]; view: BuildViewSnapshot } {
  const v = new BuildView('b-test');
  for (const e of events.slice(0, to)) v.apply(e, 0);
  return { before: events.slice(0, from), after: events.slice(to), view: v.snapshot() };
}

/** Feeds a renderer as the build command does: begin, events through the live view, a reset, end. */
function feed(r: BuildRenderer, parts: BuildEvent[][], view?: BuildViewSnapshot): void {
  const live = new LiveView('b-test', rendererHandlers(r), { now: () => 0 });
  r.begin(record);
  live.startEmpty();
  live.events(parts[0]);
  if (view) live.reset(view);
  for (const p of parts.slice(1)) live.events(p);
  const fin = parts.at(-1)!.at(-1) as BuildFinished;
  live.end(fin);
  r.end(fin);
}

// 20 ms between events: each line's timestamp (10 ms resolution) tells which event printed it.
const events = tensorrtLikeStream(7, { nodes: 10, dt: 20 });
// The gap swallows the start of "Building engine from subgraph" and of the tactic timing, and
// the finish of "Preparing graph for optimization": phases started in it finish after it.
const startOf = (name: string) => events.findIndex((e) => e.type === 'phase.start' && e.name === name);
const GAP_FROM = startOf('Preparing graph for optimization') + 2;
const GAP_TO = startOf('Timing graph nodes') + 5;

describe('renderers restart from a view after a reset', () => {
  let noColor: string | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
    noColor = process.env.NO_COLOR;
    process.env.NO_COLOR = '1';
  });
  afterEach(() => {
    vi.useRealTimers();
    if (noColor === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = noColor;
  });

  it('the gap is where the test means it to be', () => {
    const gap = events.slice(GAP_FROM, GAP_TO);
    expect(gap.some((e) => e.type === 'phase.start' && e.name === 'Building engine from subgraph')).toBe(true);
    expect(gap.some((e) => e.type === 'phase.finish')).toBe(true);
    expect(events.length - GAP_TO).toBeGreaterThan(50);
  });

  it('plain lines: a note naming the missing events and where the build stands, then exactly the lines a full stream gives', () => {
    const { before, after, view } = withGap(events, GAP_FROM, GAP_TO);
    const full = sink();
    feed(new PlainRenderer(full.out, () => 0), [events]);
    const reset = sink();
    feed(new PlainRenderer(reset.out, () => 0), [before, after], view);

    const lines = reset.text().split('\n');
    const note = lines.findIndex((l) => l.includes('no longer available'));
    expect(note).toBeGreaterThan(0);
    expect(lines[note]).toContain(`events #${GAP_FROM}–#${GAP_TO - 1} are no longer available`);
    expect(lines[note]).toMatch(/going on from the build's state: Building engine \d+\/6 › Building engine from subgraph 0\/1 › .*Timing graph nodes \d+\/10/);
    // Before the gap: what the full stream printed up to it.
    const fullLines = full.text().split('\n');
    expect(lines.slice(0, note)).toEqual(fullLines.slice(0, note));
    // After it: the full stream's lines for the events after the gap, including the finish lines
    // of phases whose start fell in the gap, and the same summary.
    const firstAfterT = `[${(after[0].t / 1000).toFixed(2).padStart(8)}s]`;
    const tail = fullLines.slice(fullLines.findIndex((l, i) => i >= note && l >= firstAfterT && l.startsWith('[')));
    expect(lines.slice(note + 1)).toEqual(tail);
    expect(lines.slice(note + 1).some((l) => /✓ Building engine from subgraph 1\/1/.test(l))).toBe(true);
    expect(reset.text()).toMatch(/Succeeded in/);
  });

  it('terminal: the final tree and status equal those of a renderer that saw every event', () => {
    const { before, after, view } = withGap(events, GAP_FROM, GAP_TO);
    const finalFrame = (text: string) => text.slice(text.lastIndexOf('\x1b[J') + 3);
    const full = sink();
    feed(new TtyRenderer(full.out, () => 0), [events]);
    const reset = sink();
    const r = new TtyRenderer(reset.out, () => 0);
    feed(r, [before, after], view);
    expect(reset.text()).toContain(`events #${GAP_FROM}–#${GAP_TO - 1} are no longer available; the tree goes on from the build's state at`);
    expect(finalFrame(reset.text())).toEqual(finalFrame(full.text()));
    expect(finalFrame(reset.text())).toMatch(/Determining refit engines/);
  });

  it('--json: stdout goes on with the events after the view, in seq order; stderr names the events that will not come', () => {
    const { before, after, view } = withGap(events, GAP_FROM, GAP_TO);
    const out = sink();
    const errs: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => (errs.push(String(c)), true));
    try {
      feed(new JsonRenderer(out.out), [before, after], view);
    } finally {
      spy.mockRestore();
    }
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BuildEvent);
    expect(lines.map((e) => e.seq)).toEqual([...before, ...after].map((e) => e.seq));
    expect(lines.at(-1)).toMatchObject({ type: 'build.finished', status: 'succeeded' });
    expect(errs.join('')).toBe(`trt-build-studio build: events #${GAP_FROM}–#${GAP_TO - 1} are no longer available; the stream goes on after #${GAP_TO - 1}\n`);
  });

  it('events the view already holds change nothing when they arrive after the reset (a replay that overlaps it)', () => {
    const { before, after, view } = withGap(events, GAP_FROM, GAP_TO);
    const overlapping = sink();
    feed(new PlainRenderer(overlapping.out, () => 0), [before, events.slice(GAP_FROM)], view);
    const exact = sink();
    feed(new PlainRenderer(exact.out, () => 0), [before, after], view);
    expect(overlapping.text()).toBe(exact.text());
    expect(overlapping.text()).not.toContain('▸ Timing tactics');
  });
});

describe('a build whose backend is not known when it is accepted (a farm build waiting for a machine)', () => {
  it('the header says what was asked and when it is decided, and the backend is named once the build starts', () => {
    const farm = { ...record, backend: undefined, backendVersion: undefined, options: { backend: 'auto' } } as unknown as BuildRecord;
    const plain = sink();
    const r = new PlainRenderer(plain.out, () => 0);
    r.begin(farm);
    const live = new LiveView('b-test', rendererHandlers(r), { now: () => 0 });
    live.startEmpty();
    live.events(events);
    r.end(events.at(-1) as BuildFinished);
    const lines = plain.text().split('\n');
    expect(lines[0]).toBe('Backend: backend auto (decided when a worker starts the build)');
    expect(plain.text()).not.toContain('unknown backend');
    const started = events.find((e) => e.type === 'build.started') as Extract<BuildEvent, { type: 'build.started' }>;
    expect(lines.filter((l) => l.includes('] Backend: '))).toEqual([
      expect.stringMatching(started.backend === 'simulated' ? /\] Backend: simulated .*SIMULATED build/ : /\] Backend: TensorRT/),
    ]);
  });
});
