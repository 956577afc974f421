// The probe protocol (docs/watch.md) as events of the one build protocol: a probe inside the
// user's program reports TensorRT's callbacks by phase name; this fold gives each build its phase
// ids, parents, instances and step counts the way the native recorder does
// (native/src/core/recorder.cc: a name is looked up among the open phases, the latest started
// first; an unknown parent makes a root; a step that does not rise, is out of range or names no
// open phase is dropped; finish before the last step is `early`). Pure: the sink that owns the
// connection (apps/service/watched/) stamps nothing itself.
import { z } from 'zod';
import { PROTOCOL_VERSION, type BuildEvent, type BuildFinished, type BuildStarted, type CancelReason, type EventBody, type Severity, type WatchedBuild } from './protocol.js';

export const PROBE_PROTOCOL_VERSION = 1 as const;

const num = z.number().finite();
const Tensor = z.object({ name: z.string(), shape: z.array(z.union([z.number().int(), z.string()])), dtype: z.string() });

export const ProbeHello = z.object({
  type: z.literal('hello'),
  v: z.literal(PROBE_PROTOCOL_VERSION),
  probe: z.string().min(1).max(64),
  pid: z.number().int(),
  ppid: z.number().int().optional(),
  argv: z.array(z.string()).max(10_000).default([]),
  exe: z.string().optional(),
  cwd: z.string().optional(),
  trtVersion: z.string().max(64).optional(),
});
export type ProbeHello = z.infer<typeof ProbeHello>;

export const ProbeBuildBegin = z.object({
  type: z.literal('build.begin'),
  build: z.number().int(),
  api: z.string().max(200).optional(),
  network: z.object({ name: z.string().optional(), layers: z.number().int().optional(), inputs: z.array(Tensor).optional(), outputs: z.array(Tensor).optional() }).optional(),
  config: z
    .object({ flags: z.array(z.string()).optional(), optimizationLevel: z.number().int().optional(), workspaceBytes: num.optional(), profilingVerbosity: z.string().optional() })
    .optional(),
  timingCache: z.object({ entries: z.number().int().optional(), bytes: z.number().int().optional() }).optional(),
  chained: z.boolean().optional(),
});
export type ProbeBuildBegin = z.infer<typeof ProbeBuildBegin>;

export const ProbeLine = z.discriminatedUnion('type', [
  ProbeHello,
  ProbeBuildBegin,
  z.object({ type: z.literal('phase.start'), build: z.number().int(), t: num, name: z.string(), parent: z.string().nullable().optional(), steps: z.number().int() }),
  z.object({ type: z.literal('phase.step'), build: z.number().int(), t: num, name: z.string(), step: z.number().int() }),
  z.object({ type: z.literal('phase.finish'), build: z.number().int(), t: num, name: z.string() }),
  z.object({ type: z.literal('log'), build: z.number().int().optional(), t: num.optional(), severity: z.string(), message: z.string() }),
  z.object({
    type: z.literal('build.end'),
    build: z.number().int(),
    t: num,
    result: z.enum(['engine', 'null', 'exception']).or(z.null()),
    bytes: z.number().int().nonnegative().optional(),
    cancelled: z.boolean().default(false),
    error: z.string().optional(),
  }),
  z.object({ type: z.literal('warning'), message: z.string() }),
]);
export type ProbeLine = z.infer<typeof ProbeLine>;

/** One probe line (text without its newline): the parsed line, or why it is not one. */
export function parseProbeLine(text: string): { line: ProbeLine } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: `not JSON: ${text.slice(0, 80)}` };
  }
  const r = ProbeLine.safeParse(raw);
  if (!r.success) {
    const type = (raw as { type?: unknown })?.type;
    return {
      error: `bad probe line${typeof type === 'string' ? ` (${type.slice(0, 40)})` : ''}: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    };
  }
  return { line: r.data };
}

/** A probe's severity (TensorRT's "kWARNING", Python's "WARNING", "warning") as the protocol's. */
export function probeSeverity(s: string): Severity {
  const k = s.toLowerCase().replace(/^k(?=[a-z])/, '');
  switch (k) {
    case 'internal_error':
    case 'error':
    case 'warning':
    case 'info':
    case 'verbose':
      return k;
    default:
      return 'info';
  }
}

/** The watched label of a build: who reported it and what the probe read. */
export function watchedOf(hello: ProbeHello, begin: ProbeBuildBegin): WatchedBuild {
  const program = hello.argv[0] ?? hello.exe ?? `pid ${hello.pid}`;
  return {
    program,
    pid: hello.pid,
    argv: hello.argv,
    probe: hello.probe,
    ...(begin.api ? { api: begin.api } : {}),
    ...(begin.network ? { network: begin.network } : {}),
    ...(begin.config ? { config: begin.config } : {}),
    ...(begin.timingCache ? { timingCache: begin.timingCache } : {}),
    ...(begin.chained !== undefined ? { chained: begin.chained } : {}),
  };
}

/** The label a watched build goes by where a model path is shown: the command line, shortened. */
export function watchedLabel(w: Pick<WatchedBuild, 'argv' | 'program' | 'pid'>): string {
  const cmd = (w.argv.length ? w.argv : [w.program]).join(' ');
  return `${cmd.length > 120 ? `${cmd.slice(0, 119)}…` : cmd} (pid ${w.pid})`;
}

interface Phase {
  id: number;
  parentId: number | null;
  name: string;
  nbSteps: number;
  stepsDone: number;
  open: boolean;
}

/**
 * One watched build: probe lines in, events out (seq from 0, build.started first). Ends once:
 * with the probe's build.end, a crash (the connection closed) or a local ending.
 */
export class ProbeBuildFold {
  private seq = 0;
  private nextId = 0;
  private lastT = 0;
  private readonly phases = new Map<number, Phase>();
  /** Open phases, in start order: a name resolves to the latest started one. */
  private readonly open: Phase[] = [];
  private readonly instances = new Map<string, number>();
  private cancelAt?: number;
  ended?: BuildFinished;

  constructor(
    readonly buildId: string,
    readonly hello: ProbeHello,
    readonly begin: ProbeBuildBegin,
  ) {}

  private stamp<E extends BuildEvent = BuildEvent>(body: EventBody, t: number): E {
    // The build clock never runs backwards on the way out, whatever order two threads' lines took.
    this.lastT = Math.max(this.lastT, Number.isFinite(t) ? t : this.lastT);
    return { v: PROTOCOL_VERSION, buildId: this.buildId, seq: this.seq++, t: this.lastT, ...body } as unknown as E;
  }

  /** build.started: a TensorRT build (the probe's version, when it knows it), labelled watched. */
  started(): BuildStarted {
    return this.stamp<BuildStarted>(
      {
        type: 'build.started',
        backend: 'tensorrt',
        backendVersion: this.hello.trtVersion ?? 'unknown',
        simulated: false,
        watched: watchedOf(this.hello, this.begin),
      },
      0,
    );
  }

  private find(name: string): Phase | undefined {
    for (let i = this.open.length - 1; i >= 0; i--) if (this.open[i].name === name) return this.open[i];
    return undefined;
  }

  /** The events one probe line of this build makes (none for a line with nothing to show). */
  apply(line: ProbeLine): BuildEvent[] {
    if (this.ended) return [];
    switch (line.type) {
      case 'phase.start': {
        const parent = line.parent ? this.find(line.parent) : undefined;
        const parentId = parent ? parent.id : null;
        const key = `${parentId ?? -1}\u0000${line.name}`;
        const instance = this.instances.get(key) ?? 0;
        this.instances.set(key, instance + 1);
        const p: Phase = { id: this.nextId++, parentId, name: line.name, nbSteps: Math.max(0, line.steps), stepsDone: 0, open: true };
        this.phases.set(p.id, p);
        this.open.push(p);
        return [this.stamp({ type: 'phase.start', id: p.id, parentId, name: p.name, nbSteps: p.nbSteps, instance }, line.t)];
      }
      case 'phase.step': {
        const p = this.find(line.name);
        if (!p || line.step < 0 || line.step >= p.nbSteps || line.step + 1 <= p.stepsDone) return [];
        p.stepsDone = line.step + 1;
        return [this.stamp({ type: 'phase.step', id: p.id, step: line.step, stepsDone: p.stepsDone }, line.t)];
      }
      case 'phase.finish': {
        const p = this.find(line.name);
        if (!p) return [];
        p.open = false;
        this.open.splice(this.open.indexOf(p), 1);
        return [this.stamp({ type: 'phase.finish', id: p.id, stepsDone: p.stepsDone, early: p.stepsDone < p.nbSteps }, line.t)];
      }
      case 'log':
        return [this.stamp({ type: 'log', severity: probeSeverity(line.severity), message: line.message }, line.t ?? this.lastT)];
      case 'build.end': {
        // JSON null: the probe saw the build's callbacks but not what the call returned (the C++
        // drop-in used without endBuild). Not cancelled, no exception seen: shown as succeeded,
        // with a warning that the result itself is unknown (no engine size is claimed).
        if (line.result === null && !line.cancelled) {
          const note = this.stamp<BuildEvent>(
            {
              type: 'log',
              severity: 'warning',
              message:
                'the program’s monitor did not see what the build call returned (no endBuild): the build ran to its end without a cancel, but whether an engine came back is unknown',
            },
            Math.max(line.t, this.lastT),
          );
          return [note, this.finish(line)];
        }
        return [this.finish(line)];
      }
      default:
        return [];
    }
  }

  /** Stop was asked for (Ctrl-C, the studio's Stop): said at once, as a build's worker says it. */
  cancelling(reason: CancelReason, t: number): BuildEvent[] {
    if (this.ended || this.cancelAt !== undefined) return [];
    this.cancelAt = Math.max(t, this.lastT);
    return [this.stamp({ type: 'build.cancelling', requestedAt: this.cancelAt, reason }, this.cancelAt)];
  }

  private finish(end: Extract<ProbeLine, { type: 'build.end' }>): BuildFinished {
    const result = end.result === null ? (end.cancelled ? 'null' : 'unknown') : end.result;
    let f: Extract<EventBody, { type: 'build.finished' }>;
    const durationMs = Math.max(end.t, this.lastT);
    if (result === 'engine' || result === 'unknown')
      f = { type: 'build.finished', status: 'succeeded', durationMs, ...(end.bytes !== undefined ? { engineBytes: end.bytes } : {}) };
    else if (end.cancelled) f = { type: 'build.finished', status: 'cancelled', durationMs };
    else if (result === 'exception') f = { type: 'build.finished', status: 'failed', durationMs, error: end.error?.trim() || 'the build call raised an exception' };
    else f = { type: 'build.finished', status: 'failed', durationMs, error: 'TensorRT returned no engine' };
    if (this.cancelAt !== undefined && f.status === 'cancelled') f = { ...f, stopToFinishMs: Math.max(0, durationMs - this.cancelAt) };
    this.ended = this.stamp<BuildFinished>(f, durationMs);
    return this.ended;
  }

  /**
   * The connection closed (the program exited or was killed) while the build was open: crashed,
   * with where it was (the latest started open phase and its parents).
   */
  crash(how: string, t: number): BuildFinished[] {
    if (this.ended) return [];
    const path = this.openPath();
    const where = path.length ? ` in ${path.join(' › ')}` : '';
    const durationMs = Math.max(t, this.lastT);
    this.ended = this.stamp<BuildFinished>(
      { type: 'build.finished', status: 'crashed', durationMs, error: `the watched program ended the build${where}: ${how}`, ...(path.length ? { lastPhasePath: path } : {}) },
      durationMs,
    );
    return [this.ended];
  }

  /** Outermost first, down to the most recently started open phase. */
  openPath(): string[] {
    const out: string[] = [];
    let p: Phase | undefined = this.open[this.open.length - 1];
    while (p) {
      out.unshift(p.name);
      p = p.parentId === null ? undefined : this.phases.get(p.parentId);
    }
    return out;
  }

  /** The latest t seen (the build clock as the probe reported it). */
  get t(): number {
    return this.lastT;
  }
}
