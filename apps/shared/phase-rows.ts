// The phase tree as every surface shows it (through build-view.ts). A real build starts "Measuring tactic time" ~1,100 times
// (millions of phases in a big build), so instances are not kept: every phase is folded into a
// row keyed by its name path (root › … › name). A row counts its instances, remembers the one to
// show (the latest-started open one, else the latest finished) and a bounded list of time spans
// for the timeline. Memory grows with the number of distinct paths, not with the build length.

export interface Instance {
  id: number;
  nbSteps: number;
  stepsDone: number;
  startT: number;
  endT?: number;
  early?: boolean;
  /** Where the percentage stands inside this phase while it is open (build-view.ts, treeFraction). */
  seg?: ProgressSegment;
}

/** Where the percentage stands inside one open phase: its step, and that step's part spent by children. */
export interface ProgressSegment {
  step: number;
  /** Share of the current step spent by the children before the active one (0..1). */
  spent: number;
  childId: number;
  /** The active child's share of what is left of the step, and its own progress when last seen. */
  childShare: number;
  childV: number;
  /** The step's start on the phase's bar and its width. */
  base: number;
  width: number;
}

/** Time spans of one row, oldest first; neighbours are merged when the list gets long. */
export interface Spans {
  start: number[];
  end: number[];
  /** Instances merged into each span. */
  count: number[];
  /** Spans closer than this (ms) are merged; grows as the list fills up. */
  gap: number;
}

export interface PhaseRow {
  key: string;
  name: string;
  /** The name path, "/"-joined ("Building engine/Cloning network graph"): phase shares' key. */
  path: string;
  depth: number;
  parent: PhaseRow | null;
  children: PhaseRow[];
  /** The same rows by name (a row's children have distinct names). */
  childByName: Map<string, PhaseRow>;
  /** Instances started so far. */
  count: number;
  earlyCount: number;
  /** Instances of this path open right now (usually 0 or 1; more with parallel hierarchies). */
  open: Instance[];
  /** What the row displays: the latest-started open instance, else the latest finished one. */
  shown: Instance;
  firstStartT: number;
  spans: Spans;
  /** Bumped whenever anything shown in this row changes (lets views skip unchanged rows). */
  rev: number;
  /**
   * A crashed build's `lastPhasePath` ends here (markCrashSite): 'last' on the deepest row of the
   * path, 'path' on the rows above it. A row of the path the view never received a start for
   * has count 0 (its events were lost with the worker).
   */
  crashSite?: 'last' | 'path';
}

const SEP = '\u001f';
export const MAX_SPANS_PER_ROW = 1024;
/** Finished phases remembered for children that arrive after their parent finished. */
const RECENT_LIMIT = 4096;

export class PhaseRows {
  readonly root: PhaseRow = newRow('', '', -1, null, { id: -1, nbSteps: 0, stepsDone: 0, startT: 0 }, 0);
  readonly byKey = new Map<string, PhaseRow>();
  private readonly openById = new Map<number, OpenInstance>();
  /**
   * Open instances by parent id (null: roots), and the most recently active one of each group.
   * Kept as the events come so that "the chain of most recently active phases" (build-view.ts's
   * progress fraction, asked after every phase event) costs the depth of the tree, not a scan of
   * every open phase: that scan was the fold's largest cost per event in bench:ui profiles.
   */
  private readonly openKids = new Map<number | null, OpenInstance[]>();
  private readonly bestKid = new Map<number | null, OpenInstance>();
  private recent = new Map<number, PhaseRow>();
  /** Phase events applied (starts, steps, finishes). */
  phaseEvents = 0;
  /**
   * TensorRT callbacks these events stand for: one phaseStart and one phaseFinish per phase, and
   * one stepComplete per step done. Steps are coalesced in transit, so this is larger than the
   * number of events (and finished phases are counted as they finish: open ones are added live).
   */
  private finishedCallbacks = 0;
  rowsCreated = 0;
  /**
   * Bumped whenever the set of rows changes (a row is made, a reset, a snapshot loaded): views
   * that flatten the tree (the UI's visible rows) redo that only when it moved.
   */
  structureRev = 0;
  /** Rows with at least one instance that ended before its last step (only ever rises, but on reset). */
  earlyRows = 0;
  lastT = 0;
  /** Rises on every start and step, and when a child finishes: orders "most recently active". */
  private tick = 0;

  start(id: number, parentId: number | null, name: string, nbSteps: number, t: number): void {
    this.phaseEvents++;
    if (t > this.lastT) this.lastT = t;
    if (this.openById.has(id)) return; // duplicate delivery (replay after reconnect)
    const parentRow = parentId === null ? this.root : (this.openById.get(parentId)?.row ?? this.recent.get(parentId) ?? this.root);
    // Looked up by name among the parent's rows: the path key is built only for a new row.
    let row = parentRow.childByName.get(name);
    const inst: Instance = { id, nbSteps: Math.max(0, nbSteps), stepsDone: 0, startT: t, seg: undefined };
    if (!row) {
      const key = parentRow.key + SEP + name;
      row = newRow(key, name, parentRow.depth + 1, parentRow, inst, t);
      parentRow.children.push(row);
      parentRow.childByName.set(name, row);
      parentRow.rev++;
      this.byKey.set(key, row);
      this.rowsCreated++;
      this.structureRev++;
    }
    row.count++;
    row.open.push(inst);
    row.shown = inst;
    row.rev++;
    this.addOpen({ row, inst, parentId, activity: 0 });
  }

  /** Whether the phase with this id is open (started, not finished). */
  isOpen(id: number): boolean {
    return this.openById.has(id);
  }

  /** The open phase with this id, if it is open. */
  openInstance(id: number): Instance | undefined {
    return this.openById.get(id)?.inst;
  }

  /** The open instance with the highest activity among those started under `parentId` (null: roots). */
  mostActiveChild(parentId: number | null): OpenInstance | undefined {
    return this.bestKid.get(parentId);
  }

  private addOpen(o: OpenInstance, activity = ++this.tick): void {
    o.activity = activity;
    this.openById.set(o.inst.id, o);
    const kids = this.openKids.get(o.parentId);
    if (kids) kids.push(o);
    else this.openKids.set(o.parentId, [o]);
    const best = this.bestKid.get(o.parentId);
    if (!best || o.activity > best.activity) this.bestKid.set(o.parentId, o);
  }

  /** Activity rose to the newest tick: it is now the most active of its siblings. */
  private touch(o: OpenInstance): void {
    o.activity = ++this.tick;
    this.bestKid.set(o.parentId, o);
  }

  private removeOpen(o: OpenInstance): void {
    this.openById.delete(o.inst.id);
    const kids = this.openKids.get(o.parentId);
    if (!kids) return;
    const i = kids.indexOf(o);
    if (i >= 0) kids.splice(i, 1);
    if (kids.length === 0) {
      this.openKids.delete(o.parentId);
      this.bestKid.delete(o.parentId);
    } else if (this.bestKid.get(o.parentId) === o) {
      let best = kids[0];
      for (let k = 1; k < kids.length; k++) if (kids[k].activity > best.activity) best = kids[k];
      this.bestKid.set(o.parentId, best);
    }
  }

  /** Returns the steps this event added (0: an unknown phase, or a step that did not rise). */
  step(id: number, stepsDone: number, t: number): number {
    this.phaseEvents++;
    if (t > this.lastT) this.lastT = t;
    const o = this.openById.get(id);
    // Steps only rise; a coalesced or replayed older step must not move the bar back.
    if (!o || stepsDone <= o.inst.stepsDone) return 0;
    const added = stepsDone - o.inst.stepsDone;
    o.inst.stepsDone = stepsDone;
    this.touch(o);
    o.row.rev++;
    return added;
  }

  /** Returns the steps the finish added beyond the last step seen (0 for an unknown phase). */
  finish(id: number, stepsDone: number, early: boolean, t: number): number {
    this.phaseEvents++;
    if (t > this.lastT) this.lastT = t;
    const o = this.openById.get(id);
    if (!o) return 0;
    const { row, inst } = o;
    const added = stepsDone > inst.stepsDone ? stepsDone - inst.stepsDone : 0;
    inst.stepsDone += added;
    inst.endT = t;
    inst.early = early;
    inst.seg = undefined;
    if (early && row.earlyCount++ === 0) this.earlyRows++;
    const i = row.open.indexOf(inst);
    if (i >= 0) row.open.splice(i, 1);
    row.shown = row.open.length > 0 ? row.open[row.open.length - 1] : inst;
    addSpan(row.spans, inst.startT, t);
    this.finishedCallbacks += 2 + inst.stepsDone;
    row.rev++;
    this.removeOpen(o);
    // The parent is where the builder works again once its child is done.
    const parent = o.parentId === null ? undefined : this.openById.get(o.parentId);
    if (parent) this.touch(parent);
    this.recent.set(id, row);
    // Evicted in bulk: deleting the oldest entry one at a time leaves holes at the front of the
    // Map that every later "first key" lookup walks over (quadratic under a fast stream).
    if (this.recent.size > 2 * RECENT_LIMIT) {
      const keep = [...this.recent].slice(-RECENT_LIMIT);
      this.recent = new Map(keep);
    }
    return added;
  }

  reset(): void {
    this.root.children = [];
    this.root.childByName.clear();
    this.root.rev++;
    this.byKey.clear();
    this.openById.clear();
    this.openKids.clear();
    this.bestKid.clear();
    this.recent.clear();
    this.phaseEvents = 0;
    this.finishedCallbacks = 0;
    this.rowsCreated = 0;
    this.structureRev++;
    this.earlyRows = 0;
    this.lastT = 0;
    this.tick = 0;
  }

  get callbacks(): number {
    let n = this.finishedCallbacks;
    for (const o of this.openById.values()) n += 1 + o.inst.stepsDone;
    return n;
  }

  /** Steps done of an open phase; undefined when it is not open. */
  stepsOf(id: number): number | undefined {
    return this.openById.get(id)?.inst.stepsDone;
  }

  /** Number of open phase instances. */
  get openCount(): number {
    return this.openById.size;
  }

  /**
   * The open phase that was active most recently (started, stepped, or had a child finish):
   * where the builder is now. With several builder threads this follows the latest activity.
   */
  activeInstance(): OpenInstance | null {
    let best: OpenInstance | null = null;
    for (const o of this.openById.values()) if (!best || o.activity > best.activity) best = o;
    return best;
  }

  activeRow(): PhaseRow | null {
    return this.activeInstance()?.row ?? null;
  }

  /** Open instances (bounded by what is running at once); for progress and snapshots. */
  openInstances(): IterableIterator<OpenInstance> {
    return this.openById.values();
  }

  /** A complete, JSON-safe picture: rebuilding from it gives the same rows and open phases. */
  toSnapshot(): RowsSnapshot {
    const index = new Map<PhaseRow, number>();
    const rows: RowSnapshot[] = [];
    const walk = (r: PhaseRow) => {
      for (const c of r.children) {
        index.set(c, rows.length);
        rows.push({
          name: c.name,
          parent: c.parent && c.parent !== this.root ? index.get(c.parent)! : -1,
          count: c.count,
          earlyCount: c.earlyCount,
          // The progress segment is the view's (build-view.ts snapshots it apart), not the row's.
          shown: withoutSegment(c.shown),
          firstStartT: c.firstStartT,
          spans: { start: [...c.spans.start], end: [...c.spans.end], count: [...c.spans.count], gap: c.spans.gap },
        });
        walk(c);
      }
    };
    walk(this.root);
    return {
      rows,
      open: [...this.openById.entries()].map(([id, o]) => ({
        id,
        row: index.get(o.row)!,
        parentId: o.parentId,
        nbSteps: o.inst.nbSteps,
        stepsDone: o.inst.stepsDone,
        startT: o.inst.startT,
        activity: o.activity,
      })),
      recent: [...this.recent.entries()].filter(([, r]) => index.has(r)).map(([id, r]) => [id, index.get(r)!] as [number, number]),
      phaseEvents: this.phaseEvents,
      finishedCallbacks: this.finishedCallbacks,
      lastT: this.lastT,
      tick: this.tick,
    };
  }

  /** Replaces everything with a snapshot made by toSnapshot(). */
  loadRowsSnapshot(s: RowsSnapshot): void {
    this.reset();
    const made: PhaseRow[] = [];
    for (const r of s.rows) {
      const parent = r.parent < 0 ? this.root : made[r.parent];
      if (!parent) throw new Error(`row snapshot: row "${r.name}" names parent ${r.parent}, which does not precede it`);
      const row = newRow(parent.key + SEP + r.name, r.name, parent.depth + 1, parent, { ...r.shown }, r.firstStartT);
      row.count = r.count;
      row.earlyCount = r.earlyCount;
      if (row.earlyCount > 0) this.earlyRows++;
      row.spans = { start: [...r.spans.start], end: [...r.spans.end], count: [...r.spans.count], gap: r.spans.gap };
      parent.children.push(row);
      parent.childByName.set(row.name, row);
      this.byKey.set(row.key, row);
      made.push(row);
    }
    this.rowsCreated = made.length;
    for (const o of s.open) {
      const row = made[o.row];
      if (!row) throw new Error(`row snapshot: open phase ${o.id} names row ${o.row}, which does not exist`);
      const inst: Instance = { id: o.id, nbSteps: o.nbSteps, stepsDone: o.stepsDone, startT: o.startT, seg: undefined };
      row.open.push(inst);
      row.shown = inst;
      this.addOpen({ row, inst, parentId: o.parentId, activity: 0 }, o.activity);
    }
    for (const [id, r] of s.recent) if (made[r]) this.recent.set(id, made[r]);
    this.phaseEvents = s.phaseEvents;
    this.finishedCallbacks = s.finishedCallbacks;
    this.lastT = s.lastT;
    this.tick = s.tick;
  }

  /** Keys of the active row and all its ancestors (root excluded), root first. */
  activePath(): string[] {
    const out: string[] = [];
    for (let r = this.activeRow(); r && r !== this.root; r = r.parent) out.push(r.key);
    return out.reverse();
  }

  /**
   * Marks where a crashed worker was (`path`: outermost phase first, from the crash record that
   * outlived it), adding the rows of the path the view never received, with no instance (count
   * 0) and `t` as their time. Idempotent: a view rebuilt from a snapshot marks the same rows.
   */
  markCrashSite(path: readonly string[], t: number): void {
    let parent = this.root;
    for (let i = 0; i < path.length; i++) {
      const name = path[i];
      let row = parent.childByName.get(name);
      if (!row) {
        row = newRow(parent.key + SEP + name, name, parent.depth + 1, parent, { id: -1, nbSteps: 0, stepsDone: 0, startT: t, endT: t }, t);
        parent.children.push(row);
        parent.childByName.set(name, row);
        parent.rev++;
        this.byKey.set(row.key, row);
        this.rowsCreated++;
        this.structureRev++;
      }
      const mark = i === path.length - 1 ? 'last' : 'path';
      if (row.crashSite !== mark) {
        row.crashSite = mark;
        row.rev++;
        this.structureRev++;
      }
      parent = row;
    }
  }

  /** Keys of the rows markCrashSite marked, outermost first ([] when none). */
  crashPath(): string[] {
    const out: string[] = [];
    for (let r: PhaseRow | undefined = this.root; r;) {
      r = r.children.find((c) => c.crashSite !== undefined);
      if (r) out.push(r.key);
    }
    return out;
  }

  /** Closes every open phase at `t` (the build ended without finishing them: crash, cancel). */
  closeAll(t: number): void {
    for (const [id, o] of [...this.openById]) this.finish(id, o.inst.stepsDone, o.inst.stepsDone < o.inst.nbSteps, t);
  }
}

export interface OpenInstance {
  row: PhaseRow;
  inst: Instance;
  parentId: number | null;
  activity: number;
}

export interface RowSnapshot {
  name: string;
  /** Index of the parent row in the same list (parents come first); -1 at the top. */
  parent: number;
  count: number;
  earlyCount: number;
  shown: Instance;
  firstStartT: number;
  spans: Spans;
}

export interface RowsSnapshot {
  rows: RowSnapshot[];
  open: { id: number; row: number; parentId: number | null; nbSteps: number; stepsDone: number; startT: number; activity: number }[];
  /** Recently finished phase ids and their rows: children may still arrive for them. */
  recent: [number, number][];
  phaseEvents: number;
  finishedCallbacks: number;
  lastT: number;
  tick: number;
}

function withoutSegment(i: Instance): Instance {
  const { seg: _seg, ...rest } = i;
  return rest;
}

function newRow(key: string, name: string, depth: number, parent: PhaseRow | null, shown: Instance, t: number): PhaseRow {
  return {
    key,
    name,
    path: parent && parent.depth >= 0 ? `${parent.path}/${name}` : name,
    depth,
    parent,
    children: [],
    childByName: new Map(),
    count: 0,
    earlyCount: 0,
    open: [],
    shown,
    firstStartT: t,
    spans: { start: [], end: [], count: [], gap: 0 },
    rev: 0,
  };
}

/**
 * Appends a span, merging it into the previous one when the gap between them is at most the
 * list's merge gap (0 at first: only touching spans merge). When the list is full the merge gap
 * grows to the smallest gap present, at least doubling, and the list is re-merged: bounded
 * memory, amortized O(1) per span, and long idle stretches — the gaps a user should see —
 * are the last to go.
 */
export function addSpan(s: Spans, start: number, end: number): void {
  const n = s.start.length;
  if (n > 0 && start - s.end[n - 1] <= s.gap) {
    if (end > s.end[n - 1]) s.end[n - 1] = end;
    s.count[n - 1]++;
    return;
  }
  s.start.push(start);
  s.end.push(end);
  s.count.push(1);
  if (s.start.length > MAX_SPANS_PER_ROW) compactSpans(s);
}

export function compactSpans(s: Spans): void {
  while (s.start.length > (MAX_SPANS_PER_ROW * 3) / 4) {
    let minGap = Infinity;
    for (let i = 1; i < s.start.length; i++) minGap = Math.min(minGap, s.start[i] - s.end[i - 1]);
    s.gap = Math.max(s.gap * 2, minGap, 1e-3);
    const start: number[] = [s.start[0]];
    const end: number[] = [s.end[0]];
    const count: number[] = [s.count[0]];
    for (let i = 1; i < s.start.length; i++) {
      const last = start.length - 1;
      if (s.start[i] - end[last] <= s.gap) {
        if (s.end[i] > end[last]) end[last] = s.end[i];
        count[last] += s.count[i];
      } else {
        start.push(s.start[i]);
        end.push(s.end[i]);
        count.push(s.count[i]);
      }
    }
    s.start = start;
    s.end = end;
    s.count = count;
  }
}

/** Visible rows, depth first, given which rows are expanded. */
export function visibleRows(root: PhaseRow, isExpanded: (row: PhaseRow) => boolean): PhaseRow[] {
  const out: PhaseRow[] = [];
  const walk = (r: PhaseRow) => {
    for (const c of r.children) {
      out.push(c);
      if (c.children.length > 0 && isExpanded(c)) walk(c);
    }
  };
  walk(root);
  return out;
}
