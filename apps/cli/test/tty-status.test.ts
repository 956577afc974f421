// The terminal renderer's status line and output, driven with a fake terminal and a stepped clock:
// the build clock, the predicted end, whether the builder works in a silent stretch, the crash
// site, and no control character from the model reaching the terminal.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BuildEvent, BuildRecord, EventBody } from '../../shared/protocol.js';
import { LiveView } from '../../shared/live-view.js';
import { PlainRenderer } from '../render/plain-renderer.js';
import { rendererHandlers } from '../render/follow.js';
import type { BuildRenderer } from '../render/renderer.js';
import { TtyRenderer } from '../render/tty-renderer.js';

function terminal() {
  const out = Object.assign(new PassThrough(), { columns: 200, rows: 40 });
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  return { out: out as unknown as NodeJS.WriteStream, text: () => text };
}

let seq = 0;
const ev = (t: number, body: EventBody): BuildEvent => ({ v: 1, buildId: 'b1', seq: seq++, t, ...body }) as BuildEvent;
const record = {
  id: 'b1',
  state: 'running',
  modelPath: '/m.onnx',
  options: { backend: 'simulated' },
  queuedAt: '',
  lastSeq: -1,
  phases: [],
  engineAvailable: false,
  backend: 'simulated',
  backendVersion: 'sim-1',
} as BuildRecord;

/** Feeds a renderer as the build command does: through a live view started empty, on its clock. */
function follow(r: BuildRenderer, now: () => number) {
  const live = new LiveView('b1', rendererHandlers(r), { now });
  live.startEmpty();
  return {
    events: (events: BuildEvent[]) => live.events(events),
    end: (fin: Extract<BuildEvent, { type: 'build.finished' }>) => {
      live.end(fin);
      r.end(fin);
    },
  };
}

describe('terminal status line', () => {
  let noColor: string | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
    noColor = process.env.NO_COLOR;
    delete process.env.NO_COLOR;
  });
  afterEach(() => {
    vi.useRealTimers();
    if (noColor !== undefined) process.env.NO_COLOR = noColor;
  });

  it("shows elapsed build time, the last callback with the builder's CPU, the predicted end, and highlights a long silence", () => {
    let wall = 0;
    const term = terminal();
    const r = new TtyRenderer(term.out, () => wall);
    r.begin(record);
    const rIn = follow(r, () => wall);
    expect(r.statusLine()).toMatch(/^starting the build worker…/);
    wall = 2000;
    rIn.events([
      ev(0, { type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }),
      ev(10, { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 6, instance: 0 }),
      ev(1000, { type: 'heartbeat', sinceLastCallbackMs: 990, cancelRequested: false, workerCpuMs: 500 }),
      ev(2000, {
        type: 'heartbeat',
        sinceLastCallbackMs: 1990,
        cancelRequested: false,
        workerCpuMs: 2000,
        estimate: { remainingMs: 8000, lowMs: 6000, highMs: 10_000, basis: 2 },
      }),
    ]);
    expect(r.statusLine()).toBe('elapsed 2.0 s · last (simulated) TensorRT callback 2.0 s ago (builder busy, 1.5 cores) · about 8.0 s left (6.0 s–10.0 s)');
    // 38 s of silence later, on the build clock: highlighted, and the prediction has run down.
    wall = 40_000;
    const line = r.statusLine();
    expect(line).toContain('elapsed 40.0 s');
    expect(line).toContain('\x1b[1;33mlast (simulated) TensorRT callback 40.0 s ago (builder busy, 1.5 cores)\x1b[0m');
    expect(line).toContain('· past the predicted end');
    // A worker that stopped burning CPU is stalled.
    rIn.events([ev(41_000, { type: 'heartbeat', sinceLastCallbackMs: 40_990, cancelRequested: false, workerCpuMs: 2001 })]);
    expect(r.statusLine()).toContain('(no CPU use)');
    r.dispose();
  });

  it("a first build's estimate from progress says when its percentage rests on typical phase weights (the prior), not when on earlier builds'", () => {
    for (const [phaseSharesSource, note] of [
      ['prior', ' (estimate from progress so far, typical phase weights)'],
      ['history', ' (estimate from progress so far)'],
    ] as const) {
      let wall = 0;
      const r = new TtyRenderer(terminal().out, () => wall);
      r.begin(record);
      const rIn = follow(r, () => wall);
      wall = 4000;
      rIn.events([
        ev(0, { type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true, phaseShares: { 'Building engine@2/6': 0.9 }, phaseSharesSource }),
        ev(10, { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 6, instance: 0 }),
        ev(4000, {
          type: 'heartbeat',
          sinceLastCallbackMs: 3990,
          cancelRequested: false,
          estimate: { remainingMs: 12_000, lowMs: 6000, highMs: 36_000, basis: 0, source: 'progress' },
        }),
      ]);
      expect(r.statusLine(), phaseSharesSource).toContain(`about 12.0 s left (6.0 s–36.0 s)${note}`);
      expect(r.statusLine().includes('typical phase weights'), phaseSharesSource).toBe(phaseSharesSource === 'prior');
      r.dispose();
    }
  });

  it('prints logs and phase names with control characters escaped, and says where a crashed build died', () => {
    const term = terminal();
    const r = new TtyRenderer(term.out, () => 0);
    r.begin(record);
    const rIn = follow(r, () => 0);
    rIn.events([
      ev(1, { type: 'phase.start', id: 1, parentId: null, name: 'Layer\x1b]0;pwned\x07', nbSteps: 2, instance: 0 }),
      ev(2, { type: 'log', severity: 'error', message: 'tensor "x\x1b[2J" has no shape' }),
    ]);
    rIn.end(
      ev(3, { type: 'build.finished', status: 'crashed', durationMs: 3, error: 'worker died', lastPhasePath: ['Building engine', 'Timing tactics'] }) as Extract<
        BuildEvent,
        { type: 'build.finished' }
      >,
    );
    const text = term.text();
    expect(text).not.toContain('\x1b[2J');
    expect(text).not.toContain('\x1b]0;');
    expect(text).toContain('tensor "x\\x1b[2J" has no shape');
    expect(text).toContain('Layer\\x1b]0;pwned\\x07');
    expect(text).toContain('crashed · 3 ms · crashed in Building engine › Timing tactics');
    expect(text).toContain('  crashed in Building engine › Timing tactics');
  });
});

describe('plain output', () => {
  it("names the long silence with the builder's CPU and the predicted end, and escapes control characters", () => {
    let wall = 0;
    const term = terminal();
    const r = new PlainRenderer(term.out, () => wall);
    r.begin(record);
    const rIn = follow(r, () => wall);
    rIn.events([
      ev(0, { type: 'phase.start', id: 1, parentId: null, name: 'Building\x1b[31m engine', nbSteps: 6, instance: 0 }),
      ev(1000, { type: 'heartbeat', sinceLastCallbackMs: 1000, cancelRequested: false, workerCpuMs: 0 }),
      ev(2000, {
        type: 'heartbeat',
        sinceLastCallbackMs: 2000,
        cancelRequested: false,
        workerCpuMs: 0,
        estimate: { remainingMs: 60_000, lowMs: 60_000, highMs: 60_000, basis: 1 },
      }),
    ]);
    // Those events arrived at wall time 0; 31 s later the build clock reads 2 s + 31 s.
    wall = 31_000;
    r.silenceNote();
    rIn.end(ev(31_000, { type: 'build.finished', status: 'cancelled', durationMs: 31_000 }) as Extract<BuildEvent, { type: 'build.finished' }>);
    const text = term.text();
    expect(text).toContain('▸ Building\\x1b[31m engine (6 steps)');
    // Past 30 s without a callback the note is marked (plain output has no colours).
    expect(text).toContain('⚠ still building; last TensorRT callback 33.0 s ago (no CPU use); about 29.0 s left\n');
    expect(text).not.toContain('\x1b[31m');
  });

  it('tells phases a stop or a failure cut short from ones TensorRT finished early in a good build', () => {
    const run = (tail: () => BuildEvent[]) => {
      const term = terminal();
      const r = new PlainRenderer(term.out, () => 0);
      r.begin(record);
      const rIn = follow(r, () => 0);
      rIn.events([
        ev(0, { type: 'phase.start', id: 1, parentId: null, name: 'Building engine', nbSteps: 6, instance: 0 }),
        ev(10, { type: 'phase.start', id: 2, parentId: 1, name: 'Optimizing graph', nbSteps: 27, instance: 0 }),
        ev(20, { type: 'phase.finish', id: 2, stepsDone: 21, early: true }),
      ]);
      rIn.events(tail());
      return term.text();
    };
    // A good build: the early finish is a detail, printed once the next event shows the build goes on.
    const good = run(() => [ev(30, { type: 'phase.start', id: 3, parentId: 1, name: 'Timing', nbSteps: 3, instance: 0 })]);
    expect(good).toContain('✓ Optimizing graph 21/27 (finished early) in 10 ms');
    // A failure: the unwinding finishes arrive with build.finished in one batch.
    const failed = run(() => [
      ev(30, { type: 'phase.start', id: 3, parentId: 1, name: 'Timing', nbSteps: 3, instance: 0 }),
      ev(40, { type: 'phase.finish', id: 3, stepsDone: 0, early: true }),
      ev(41, { type: 'phase.finish', id: 1, stepsDone: 2, early: true }),
      ev(42, { type: 'build.finished', status: 'failed', durationMs: 42, error: 'boom' }),
    ]);
    expect(failed).toContain('■ Timing stopped at 0/3 after 10 ms');
    expect(failed).toContain('■ Building engine stopped at 2/6 after 41 ms');
    expect(failed).not.toContain('✓ Building engine');
    // A cancel: known from build.cancelling, before the finishes.
    const cancelled = run(() => [ev(30, { type: 'build.cancelling', requestedAt: 30, reason: 'user' }), ev(35, { type: 'phase.finish', id: 1, stepsDone: 2, early: true })]);
    expect(cancelled).toContain('■ Building engine stopped at 2/6 after 35 ms');
  });
});

describe('verbose log lines', () => {
  const logs = (t: number): BuildEvent[] => [
    ev(t, { type: 'log', severity: 'verbose', message: 'Autotuning op conv1 (Conv)' }),
    ev(t + 1, { type: 'log', severity: 'info', message: 'Loaded timing cache' }),
    ev(t + 2, { type: 'log', severity: 'warning', message: 'careful' }),
  ];
  const verboseRecord = { ...record, options: { backend: 'simulated', verboseLog: true } } as BuildRecord;

  it('plain output prints VERBOSE lines only when the build asked for its verbose log', () => {
    const quiet = terminal();
    const q = new PlainRenderer(quiet.out, () => 0);
    q.begin(record);
    const qIn = follow(q, () => 0);
    qIn.events(logs(1));
    expect(quiet.text()).not.toContain('Autotuning op conv1');
    expect(quiet.text()).toContain('info: Loaded timing cache');

    const loud = terminal();
    const l = new PlainRenderer(loud.out, () => 0);
    l.begin(verboseRecord);
    const lIn = follow(l, () => 0);
    lIn.events(logs(1));
    expect(loud.text()).toContain('verbose: Autotuning op conv1 (Conv)');
    expect(loud.text()).toContain('warning: careful');
  });

  it('the terminal scrolls info and VERBOSE lines only when the build asked for its verbose log', () => {
    vi.useFakeTimers();
    try {
      const quiet = terminal();
      const q = new TtyRenderer(quiet.out, () => 0);
      q.begin(record);
      const qIn = follow(q, () => 0);
      qIn.events(logs(1));
      q.dispose();
      expect(quiet.text()).not.toContain('Autotuning op conv1');
      expect(quiet.text()).not.toContain('Loaded timing cache');
      expect(quiet.text()).toContain('warning: careful');

      const loud = terminal();
      const l = new TtyRenderer(loud.out, () => 0);
      l.begin(verboseRecord);
      const lIn = follow(l, () => 0);
      lIn.events(logs(1));
      l.dispose();
      expect(loud.text()).toContain('verbose: Autotuning op conv1 (Conv)');
      expect(loud.text()).toContain('info: Loaded timing cache');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('terminal warnings keep their whole text', () => {
  it('a warning longer than the terminal is wrapped under the tree, every word of it shown', () => {
    vi.useFakeTimers();
    try {
      const term = terminal();
      (term.out as unknown as { columns: number }).columns = 60;
      const r = new TtyRenderer(term.out, () => 0);
      r.begin(record);
      const input = follow(r, () => 0);
      const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
      input.events([
        ev(1, { type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true }),
        ev(2, { type: 'log', severity: 'warning', message: words.join(' ') }),
      ]);
      r.dispose();
      const plain = term.text().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
      const lines = plain.split('\n').filter((l) => /word\d/.test(l));
      expect(lines.length).toBeGreaterThan(1);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(59);
      expect(
        lines
          .join(' ')
          .split(/\s+/)
          .filter((w) => /^word\d+$/.test(w)),
      ).toEqual(words);
    } finally {
      vi.useRealTimers();
    }
  });
});
