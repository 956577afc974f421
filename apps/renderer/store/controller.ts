// The user's actions (open, build, stop, save, watch a build) against the BuildClient, with their
// effects on the store. Kept out of components so toolbar buttons, page shortcuts and the
// Electron menu all run exactly the same code.
import type { BuildClient, ModelRef } from '../../shared/build-client.js';
import { parseKnobDatabase } from '../../shared/build-routes.js';
import type { BackendChoice, BackendInfo, BuildEvent, BuildOptionsInput, BuildRecord } from '../../shared/protocol.js';
import { DEFAULT_FORM, formCapabilities, formForModel, formToOptions, type FormState } from '../lib/options-form.js';
import { formFromOptions } from '../lib/form-from-options.js';
import type { AppStore } from './app-store.js';
import { EventPump, type FrameScheduler } from './event-pump.js';
import { isFinal, LiveBuild } from './live-build.js';

export class Controller {
  private pump: EventPump | null = null;
  private unsubscribe: (() => void) | null = null;
  private clock: ReturnType<typeof setInterval> | undefined;
  /** Set by bench/ui.ts (through window.__TBS_PERF__) to measure event → paint. */
  probe: EventPump['probe'] = null;

  constructor(
    readonly store: AppStore,
    readonly client: BuildClient,
    private readonly sched: FrameScheduler,
    private readonly wallNow: () => number = () => Date.now(),
  ) {}

  async init(): Promise<void> {
    await Promise.all([this.refreshBackends(), this.refreshHistory()]);
    // After a reload (or a second window) pick up a build that is still running: its snapshot
    // shows the tree so far and the stream continues from there.
    const s = this.store.getState();
    const running = [...s.history].reverse().find((r) => r.state === 'running' || r.state === 'queued' || r.state === 'cancelling');
    if (running && !s.live) {
      // Its model becomes the open one again, so Build works after this build ends.
      if (!s.model && running.model) {
        const model = { path: running.modelPath, displayName: running.model.fileName, summary: running.model };
        this.store.setState({ model, form: formForModel(running.model) });
      }
      this.watch(running.id);
    }
  }

  async refreshBackends(): Promise<void> {
    try {
      const backends = await this.client.listBackends();
      this.store.setState({ backends, backendsError: null });
    } catch (e) {
      this.store.setState({ backendsError: message(e) });
    }
  }

  /**
   * The route picker's "List knobs": the knob database of the backend `choice` resolves to, read
   * from the library by the host (seconds on a real TensorRT: it creates a builder). Kept in the
   * store for the picker; the host keeps it on disk, so later listings carry it too.
   */
  async readBuildRoutes(choice: BackendChoice): Promise<void> {
    const read = this.client.readBuildRoutes;
    if (!read) {
      this.store.setState({ routeKnobsError: 'this host cannot read build routes from the library; type the route' });
      return;
    }
    this.store.setState({ routeKnobsBusy: true, routeKnobsError: null });
    try {
      const r = await read.call(this.client, choice);
      const db = parseKnobDatabase(r.json);
      this.store.setState((s) => ({ routeKnobs: { ...s.routeKnobs, [r.backend]: db }, routeKnobsBusy: false }));
    } catch (e) {
      this.store.setState({ routeKnobsBusy: false, routeKnobsError: message(e) });
    }
  }

  async refreshHistory(): Promise<void> {
    try {
      // Records carry each build's phase snapshot (thousands of nodes for a big build); the
      // history table needs none of it, and keeping it would grow the page with every build.
      const history = (await this.client.listBuilds()).map((r) => ({ ...r, phases: [] }));
      this.store.setState({ history });
    } catch {
      // History is a convenience; the live build still works without it.
    }
  }

  // ── model ──

  async openModel(): Promise<void> {
    await this.loadModel(() => this.client.openModel());
  }

  async openDroppedFile(file: File): Promise<void> {
    await this.loadModel(() => this.client.openDroppedFile(file));
  }

  async openModelPath(path: string): Promise<void> {
    const open = this.client.openModelPath;
    if (!open) return;
    await this.loadModel(() => open.call(this.client, path));
  }

  /**
   * "Rebuild" in the engines panel: opens the model an engine was built from and fills the form
   * with the settings its manifest records (the user presses Build).
   */
  async rebuildFrom(built: { modelPath: string; options: BuildOptionsInput }): Promise<void> {
    await this.openModelPath(built.modelPath);
    const { model } = this.store.getState();
    if (!model || model.path !== built.modelPath) return;
    this.store.setState({ form: formFromOptions(built.options), formError: null });
  }

  private async loadModel(get: () => Promise<ModelRef | null>): Promise<void> {
    if (this.store.getState().modelBusy) return;
    this.store.setState({ modelBusy: true, modelError: null });
    const formAtStart = this.store.getState().form;
    try {
      const model = await get();
      if (!model) {
        this.store.setState({ modelBusy: false });
        return;
      }
      const { form, forms, modelNames, model: previous } = this.store.getState();
      // The form being left is kept for its model; the opened model gets its own (or a fresh one).
      // Options typed before any model was open, or while this one was uploading, are meant for
      // it: they are applied on top instead of being lost.
      const kept = previous ? { ...forms, [this.modelKey(previous)]: formAtStart } : forms;
      const own = kept[this.modelKey(model)] ?? formForModel(model.summary);
      const typed = previous ? editsBetween(formAtStart, form) : editsBetween(DEFAULT_FORM, form);
      this.store.setState({
        model,
        modelNames: { ...modelNames, [model.path]: model.displayName },
        modelBusy: false,
        formError: null,
        forms: kept,
        form: { ...own, ...typed },
      });
    } catch (e) {
      this.store.setState({ modelBusy: false, modelError: message(e) });
    }
  }

  /**
   * Which model a form belongs to. A path on the desktop; in the browser every upload gets a new
   * server-side path, so the file's name, size and graph stand for it instead.
   */
  modelKey(model: ModelRef): string {
    if (this.client.capabilities.host !== 'web') return model.path;
    const s = model.summary;
    return JSON.stringify([model.displayName, s.fileBytes, s.nodeCount, s.graphName, s.inputs]);
  }

  // ── build ──

  /** The simulator runs when chosen, or on auto when TensorRT is not available. */
  simulatorSelected(): boolean {
    const { form, backends } = this.store.getState();
    if (form.backend === 'simulated') return true;
    if (form.backend === 'tensorrt') return false;
    return !backends.some((b) => b.name === 'tensorrt' && b.available);
  }

  /**
   * Why Build cannot start with the form as it is (a required shape empty, a value out of range,
   * a relative path), or null when it can. Build is disabled with this reason beside it, so the
   * status never stays "Idle" after a silent refusal.
   */
  buildBlocker(): string | null {
    const s = this.store.getState();
    if (!s.model) return null;
    const result = formToOptions(s.form, s.model.summary, this.simulatorSelected(), formCapabilities(s.form.backend, s.backends));
    return result.ok ? null : result.error;
  }

  canBuild(): boolean {
    const s = this.store.getState();
    return !!s.model && !s.starting && !this.isRunning();
  }

  isRunning(): boolean {
    const live = this.store.getState().live;
    return !!live && (live.status === 'Building' || live.status === 'Stopping');
  }

  async build(): Promise<void> {
    const s = this.store.getState();
    if (!s.model) {
      this.store.setState({ formError: 'Open a model first.' });
      return;
    }
    if (!this.canBuild()) return;
    // The form hides choices the TensorRT version lacks; the capabilities are checked again here.
    const result = formToOptions(s.form, s.model.summary, this.simulatorSelected(), formCapabilities(s.form.backend, s.backends));
    if (!result.ok) {
      this.store.setState({ formError: result.error });
      return;
    }
    this.store.setState({ formError: null, starting: true, notice: null });
    try {
      const run = result.timeBudgetSeconds !== undefined ? { timeBudgetSeconds: result.timeBudgetSeconds } : undefined;
      const { id } = run ? await this.client.startBuild(s.model, result.options, run) : await this.client.startBuild(s.model, result.options);
      this.watch(id, true);
      void this.refreshHistory();
    } catch (e) {
      this.store.setState({ formError: message(e) });
    } finally {
      this.store.setState({ starting: false });
    }
  }

  async stop(): Promise<void> {
    const live = this.store.getState().live;
    if (!live || !this.isRunning()) return;
    // A second Stop while stopping asks the service to kill the worker: a builder stuck inside
    // one long step never reaches the boundary where the cancel flag is read.
    if (live.status === 'Stopping') live.forceRequested = true;
    live.markStopRequested(this.wallNow());
    this.bump();
    try {
      await this.client.cancelBuild(live.id);
    } catch (e) {
      this.store.setState({ notice: { kind: 'error', text: `Stop failed: ${message(e)}` } });
    }
  }

  async save(): Promise<void> {
    const live = this.store.getState().live;
    if (!live || !live.engineAvailable) return;
    try {
      const saved = await this.client.saveEngine(live.id);
      if (saved) {
        const verb = this.client.capabilities.host === 'web' ? 'Downloading' : 'Saved';
        this.store.setState({ notice: { kind: 'info', text: `${verb} ${saved.location} (${saved.bytes.toLocaleString('en-US')} bytes)` } });
      }
    } catch (e) {
      this.store.setState({ notice: { kind: 'error', text: `Save failed: ${message(e)}` } });
    }
  }

  /** Shows a build: its snapshot first, then the live stream, applied as it comes and shown once per frame. */
  watch(id: string, fresh = false): void {
    this.pump?.flushNow();
    this.unsubscribe?.();
    const live = new LiveBuild(id);
    if (fresh) live.status = 'Building';
    const pump = new EventPump(
      this.sched,
      (events) => this.applyEvents(live, events),
      () => this.bump(),
    );
    pump.probe = this.probe;
    this.pump = pump;
    this.store.setState((s) => ({ live, tree: { ...s.tree, follow: true, focusedKey: null } }));
    this.startClock();
    this.unsubscribe = this.client.subscribe(id, {
      onSnapshot: (rec, view) => {
        pump.flushNow();
        live.applySnapshot(rec, view, this.wallNow());
        this.bump();
        this.afterChange(live);
      },
      onEvents: (events) => pump.push(events),
      onError: (err) => this.store.setState({ notice: { kind: 'error', text: err.message } }),
    });
  }

  private applyEvents(live: LiveBuild, events: readonly BuildEvent[]): void {
    const wasFinal = isFinal(live.status);
    live.applyEvents(events, this.wallNow());
    if (!wasFinal && isFinal(live.status)) this.afterChange(live);
  }

  private afterChange(live: LiveBuild): void {
    const running = live.status === 'Building' || live.status === 'Stopping';
    if (!running) {
      this.client.setProgress?.(null);
      this.stopClock();
      void this.refreshHistory();
    }
  }

  /** Ticks elapsed / "last callback" while a build runs, even through silent stretches. */
  private startClock(): void {
    this.stopClock();
    this.clock = setInterval(() => {
      const live = this.store.getState().live;
      if (!live || isFinal(live.status)) this.stopClock();
      else this.reportProgress(live);
      this.bump();
    }, 250);
  }

  /**
   * The task bar shows the figure the status line, the window title and the other surfaces show:
   * the build view's fraction (outermost phase refined by its running child, only rising).
   */
  private reportProgress(live: LiveBuild): void {
    if (live.phases.rowsCreated > 0) this.client.setProgress?.(Math.min(0.99, live.view.fraction()));
  }

  private stopClock(): void {
    if (this.clock !== undefined) clearInterval(this.clock);
    this.clock = undefined;
  }

  private bump(): void {
    this.store.setState((s) => ({ frame: s.frame + 1 }));
  }

  dispose(): void {
    this.unsubscribe?.();
    this.stopClock();
  }
}

/** The fields changed from `before` to `after`; shapes belong to one model and never move. */
function editsBetween(before: FormState, after: FormState): Partial<FormState> {
  const out: Partial<FormState> = {};
  for (const k of Object.keys(after) as (keyof FormState)[]) {
    if (k === 'shapes' || k === 'shapeValues') continue;
    if (after[k] !== before[k]) (out as Record<string, unknown>)[k] = after[k];
  }
  return out;
}

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function backendReason(b: BackendInfo | undefined): string | undefined {
  return b && !b.available ? (b.reason ?? 'not available') : undefined;
}

export function recordDurationMs(r: BuildRecord): number | undefined {
  if (r.outcome) return r.outcome.durationMs;
  if (r.startedAt && r.finishedAt) return Date.parse(r.finishedAt) - Date.parse(r.startedAt);
  return undefined;
}
