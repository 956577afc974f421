// The live phase tree. Rows are the name-path groups of phases.ts (so ~1,100 "Measuring tactic
// time" instances are one row "×1,100"), rendered virtually: only rows in the viewport exist in
// the DOM, whatever the build throws at it. While following, the active path is expanded and
// kept in view; any deliberate scroll, collapse or keyboard move by the user stops following.
import { formatMemory } from '../../shared/memory-size.js';
import type { RowMemory } from '../../shared/memory-track.js';
import { memo, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useApp, useController } from '../hooks.js';
import { formatDuration } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { visibleRows, type PhaseRow } from '../../shared/phase-rows.js';
import { BuildSummary } from './BuildSummary.js';
import { isFinal, type LiveBuild } from '../store/live-build.js';
import { cutShortFrom } from '../../shared/view-format.js';

const ROW_H = 22;
const OVERSCAN = 8;
/** Indent per tree level and the twisty's width, as styles.css lays them out. */
const INDENT = 14;
const TWISTY = 14;
const NAME_PAD = 10;
/** The "✕ crash site" tag beside the crash site's name (its margin included). */
const CRASH_TAG_W = 78;

/**
 * Width in px of the widest visible phase name with its indent, so the name column takes the room
 * it needs and the progress bars, not the names, give way. Rows are positioned absolutely (the
 * list is virtual), so the grid cannot size the column from its content by itself.
 */
function nameColumnWidth(rows: readonly PhaseRow[], measure: (text: string) => number): number {
  let widest = 0;
  for (const r of rows) widest = Math.max(widest, r.depth * INDENT + TWISTY + measure(r.name) + (r.crashSite === 'last' ? CRASH_TAG_W : 0));
  return Math.ceil(widest + NAME_PAD);
}

let measureCtx: CanvasRenderingContext2D | null | undefined;
const measured = new Map<string, number>();
/** Text width in the tree's font; falls back to an estimate where canvas has no text metrics. */
function measureName(text: string): number {
  const hit = measured.get(text);
  if (hit !== undefined) return hit;
  if (measureCtx === undefined) {
    measureCtx = typeof document !== 'undefined' ? document.createElement('canvas').getContext('2d') : null;
    if (measureCtx) {
      const font = getComputedStyle(document.documentElement).font;
      measureCtx.font = font || '13px system-ui, sans-serif';
    }
  }
  const w = measureCtx?.measureText(text).width;
  const width = typeof w === 'number' && w > 0 ? w : text.length * 7;
  if (measured.size > 5000) measured.clear();
  measured.set(text, width);
  return width;
}

interface FlatRows {
  rows: PhaseRow[];
  /** Row key → its index in rows. */
  index: Map<string, number>;
  nameW: number;
  /** Some visible row ended before its last step as TensorRT routinely does (the legend shows). */
  anyEarly: boolean;
  /** Some visible row was cut short where the build stopped (the legend shows). */
  anyCut: boolean;
}

/**
 * How a closed row reads: 'done' (a check and its step count, muted), 'early' (done, and
 * TensorRT ended it before its last step: a check and a small explained mark), or 'cut' (the
 * build's end cut it short: its count where it stopped, kept visible).
 */
type Closed = 'done' | 'early' | 'cut';

function closedKind(inst: PhaseRow['shown'], cutT: number | undefined): Closed {
  if (!inst.early) return 'done';
  return cutT !== undefined && inst.endT !== undefined && inst.endT >= cutT ? 'cut' : 'early';
}

function flatten(rows: PhaseRow[], cutT: number | undefined): FlatRows {
  const index = new Map<string, number>();
  for (let i = 0; i < rows.length; i++) index.set(rows[i].key, i);
  let anyEarly = false;
  let anyCut = false;
  for (const r of rows) {
    if (r.count === 0) continue;
    const kind = r.open.length === 0 ? closedKind(r.shown, cutT) : undefined;
    if (kind === 'cut') anyCut = true;
    else if (kind === 'early' || r.earlyCount > 0) anyEarly = true;
  }
  return { rows, index, nameW: nameColumnWidth(rows, measureName), anyEarly, anyCut };
}

/** The legend's words and hover text for the marks. */
const EARLY_TITLE =
  'TensorRT routinely ends a phase before its last planned step (it found what it needed, or skipped work it did not need). The phase is finished; it is not an error.';
const CUT_TITLE = 'The build ended (Stop, a failure or a crash) while this phase ran: the count is where it stopped.';

export function PhaseTree() {
  const c = useController();
  const live = useApp((s) => s.live);
  useApp((s) => s.frame);
  const tree = useApp((s) => s.tree);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewH, setViewH] = useState(400);
  // Rows the follow mode opened; they stay open afterwards so the tree does not collapse under
  // the user's eyes when the builder moves on.
  // A new set for each build: `live` changes when another build is followed.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const autoOpen = useMemo(() => new Set<string>(), [live]);

  const phases = live?.phases;
  const activePath = phases ? phases.activePath() : [];
  // A crashed build: the path it died in is opened and followed like the active one.
  const crashPath = phases && live?.outcome?.status === 'crashed' ? phases.crashPath() : [];
  const followPath = activePath.length > 0 ? activePath : crashPath;
  const activeKey = followPath.length > 0 ? followPath[followPath.length - 1] : null;
  if (tree.follow) for (const k of followPath) autoOpen.add(k);
  const cutT = live ? cutShortFrom(live.view) : undefined;
  const isExpanded = (r: PhaseRow) => tree.expanded[r.key] ?? (r.depth === 0 || autoOpen.has(r.key));
  // The flattened tree and what is derived from all of it are redone only when the rows, the
  // expansion or an early mark changed, not on every frame: under a fast build the tree
  // re-renders every frame, and a walk of every row each time made the frame's cost grow with
  // the tree instead of with what is on screen.
  const flat = useMemo(
    () => flatten(phases ? visibleRows(phases.root, isExpanded) : [], cutT),
    // isExpanded reads tree.expanded and autoOpen (which only grows: its size stands for it)
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [phases, phases?.structureRev, phases?.earlyRows, tree.expanded, autoOpen, autoOpen.size, cutT],
  );
  const rows = flat.rows;
  const nowT = live ? live.elapsedMs(Date.now()) : 0;
  const focusedKey = tree.focusedKey ?? activeKey;
  const focusedIndex = focusedKey ? (flat.index.get(focusedKey) ?? -1) : -1;

  const setTree = (patch: Partial<typeof tree>) => c.store.setState((s) => ({ tree: { ...s.tree, ...patch } }));
  const stopFollowing = () => {
    if (c.store.getState().tree.follow) setTree({ follow: false });
  };

  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setViewH(el.clientHeight));
    ro.observe(el);
    setViewH(el.clientHeight);
    return () => ro.disconnect();
  }, []);

  // Keep the followed (or keyboard-focused) row in view.
  const targetIndex = tree.follow ? (activeKey ? (flat.index.get(activeKey) ?? -1) : -1) : focusedIndex;
  // Uses the scroll position and height we track rather than reading them from the element:
  // a read after React's DOM updates forces a synchronous layout on every frame.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el || targetIndex < 0) return;
    const top = targetIndex * ROW_H;
    const h = Math.max(viewH, ROW_H); // a viewport lower than a row would make the two rules fight
    let next = scrollTop;
    if (top < scrollTop) next = top;
    // Scrolled down in whole rows: the top row is never cut in half under the column header.
    else if (top + ROW_H > scrollTop + h) next = Math.min(top, Math.ceil((top + ROW_H - h) / ROW_H) * ROW_H);
    if (next !== scrollTop) {
      el.scrollTop = next;
      setScrollTop(next);
    }
  }, [targetIndex, viewH, scrollTop]);

  const toggle = (r: PhaseRow) => {
    const open = isExpanded(r);
    c.store.setState((s) => ({
      tree: { ...s.tree, expanded: { ...s.tree.expanded, [r.key]: !open }, follow: open ? false : s.tree.follow },
    }));
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (rows.length === 0) return;
    const i = Math.max(0, focusedIndex);
    const r = rows[i];
    const focus = (j: number) => setTree({ focusedKey: rows[Math.max(0, Math.min(rows.length - 1, j))].key, follow: false });
    switch (e.key) {
      case 'ArrowDown':
        focus(i + 1);
        break;
      case 'ArrowUp':
        focus(i - 1);
        break;
      case 'Home':
        focus(0);
        break;
      case 'End':
        focus(rows.length - 1);
        break;
      case 'PageDown':
        focus(i + Math.floor(viewH / ROW_H));
        break;
      case 'PageUp':
        focus(i - Math.floor(viewH / ROW_H));
        break;
      case 'ArrowRight':
        if (r.children.length === 0) return;
        if (!isExpanded(r)) toggle(r);
        else focus(i + 1);
        break;
      case 'ArrowLeft':
        if (r.children.length > 0 && isExpanded(r)) toggle(r);
        else if (r.parent && r.parent.depth >= 0) focus(flat.index.get(r.parent.key) ?? -1);
        break;
      case 'Enter':
      case ' ':
        if (r.children.length > 0) toggle(r);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  // One object per render that rows call back into; rows do not compare it (see sameRow), so it
  // must only read current state through refs, never capture a render's values.
  const latest = useRef({ toggle, setTree });
  latest.current = { toggle, setTree };
  const actions = useMemo<RowActions>(() => ({ toggle: (r) => latest.current.toggle(r), focus: (r) => latest.current.setTree({ focusedKey: r.key }) }), []);

  const { nameW, anyEarly, anyCut } = flat;
  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + viewH) / ROW_H) + OVERSCAN);
  const activeSet = new Set(followPath);

  return (
    <section className="panel tree-panel" aria-labelledby="tree-h" style={{ ['--name-w' as string]: `${nameW}px` }}>
      <div className="panel-head">
        <h2 id="tree-h">Phases</h2>
        <span className="muted small-text">
          {phases ? `${fmtCount(phases.rowsCreated)} rows · ${fmtCount(phases.openCount)} open · ${fmtCount(phases.callbacks)} callbacks` : ''}
        </span>
        {(anyEarly || anyCut || crashPath.length > 0) && (
          <span className="legend small-text">
            {anyEarly && (
              <span title={EARLY_TITLE}>
                <span className="early-mark">◂</span> ended early (routine)
              </span>
            )}
            {anyCut && (
              <span title={CUT_TITLE}>
                <span className="cut-mark">■</span> stopped
              </span>
            )}
            {crashPath.length > 0 && (
              <span title="The worker died in this phase: its path comes from the crash record that outlived the worker.">
                <span className="crash-mark">✕</span> crash site
              </span>
            )}
          </span>
        )}
        <button
          type="button"
          className={`small toggle${tree.follow ? '' : ' attention'}`}
          aria-pressed={tree.follow}
          onClick={() => setTree({ follow: !tree.follow, focusedKey: null })}
          title="Follow the phase the builder is working on"
        >
          Follow
        </button>
      </div>
      <BuildSummary />
      <div className="tree-cols" aria-hidden="true">
        <span>Phase</span>
        <span className="num">count</span>
        <span>progress</span>
        <span className="num">steps</span>
        <span className="num">elapsed</span>
        <span className="num" title="The most host memory the build worker held while this phase ran (sampled once a second)">
          peak mem
        </span>
      </div>
      <div
        className="tree-scroll"
        ref={scrollRef}
        onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        onWheel={stopFollowing}
        onPointerDown={(e) => {
          // A press on the scrollbar itself (not on a row) is the user taking over.
          if (e.target === e.currentTarget) stopFollowing();
        }}
      >
        <div
          role="tree"
          aria-label="Build phases"
          tabIndex={0}
          className="tree"
          // The part-row left over at the bottom of the viewport is slack, so scrolling to the end
          // still leaves whole rows from the top.
          style={{ height: rows.length * ROW_H + (rows.length * ROW_H > viewH ? viewH % ROW_H : 0) }}
          aria-activedescendant={focusedIndex >= 0 ? rowId(rows[focusedIndex]) : undefined}
          onKeyDown={onKeyDown}
        >
          {/* The visible rows in normal flow under one positioned box: a row that is its own
              positioned (or transformed) box is a paint layer of its own, and the compositor's
              per-frame work (layerize in Chromium's traces) grew with them while a build streams. */}
          <div className="tree-window" role="presentation" style={{ top: first * ROW_H }}>
            {rows.slice(first, last).map((r) => (
              <Row
                key={r.key}
                row={r}
                nowT={nowT}
                rev={r.rev}
                memory={live?.view.memory.of(r)}
                memHost={live?.view.memory.of(r)?.host}
                expanded={r.children.length > 0 ? isExpanded(r) : undefined}
                focused={r.key === focusedKey}
                active={activeSet.has(r.key)}
                cutT={cutT}
                actions={actions}
              />
            ))}
          </div>
        </div>
        {rows.length === 0 && <p className="muted empty">{emptyText(live)}</p>}
      </div>
    </section>
  );
}

interface RowActions {
  toggle(r: PhaseRow): void;
  focus(r: PhaseRow): void;
}

interface RowProps {
  row: PhaseRow;
  /** The row's revision when rendered: rows are mutated in place, so identity says nothing. */
  rev: number;
  /** The row's memory peaks (mutated in place too: `memHost` is what changes it). */
  memory: RowMemory | undefined;
  memHost: number | undefined;
  nowT: number;
  expanded: boolean | undefined;
  focused: boolean;
  active: boolean;
  /** From when an early end means "cut short" (cutShortFrom): it keeps its count and fraction. */
  cutT: number | undefined;
  actions: RowActions;
}

/**
 * Rows re-render only when something they show changed: under a fast build the tree re-renders
 * every frame, and re-rendering every visible row each time was most of the React work. The
 * clock (nowT) matters only to a row whose shown instance is still open.
 */
function sameRow(a: RowProps, b: RowProps): boolean {
  return (
    a.row === b.row &&
    a.rev === b.rev &&
    a.memHost === b.memHost &&
    a.memory?.gpu === b.memory?.gpu &&
    a.expanded === b.expanded &&
    a.focused === b.focused &&
    a.active === b.active &&
    a.cutT === b.cutT &&
    a.actions === b.actions &&
    (a.nowT === b.nowT || b.row.shown.endT !== undefined)
  );
}

const Row = memo(function Row(p: RowProps) {
  const { row, nowT } = p;
  const onToggle = () => p.actions.toggle(row);
  const onFocus = () => p.actions.focus(row);
  const inst = row.shown;
  const open = row.open.length > 0;
  // A crashed build's path names phases whose start was lost with the worker: no figures.
  const unreceived = row.count === 0;
  const closed = open || unreceived ? undefined : closedKind(inst, p.cutT);
  // A finished phase is finished, whatever step TensorRT last reported: its bar is full; only a
  // phase the build's end cut short keeps its fraction.
  const stepFrac = inst.nbSteps > 0 ? Math.min(1, inst.stepsDone / inst.nbSteps) : 0;
  const frac = unreceived ? 0 : closed && closed !== 'cut' ? 1 : stepFrac;
  const elapsed = (inst.endT ?? Math.max(nowT, inst.startT)) - inst.startT;
  const label =
    (unreceived
      ? `${row.name}, ${row.crashSite === 'last' ? 'crash site: the worker died here' : 'on the crash path'} before its start reached this view`
      : `${row.name} ${inst.stepsDone}/${inst.nbSteps}`) +
    (row.count > 1 ? `, ${fmtCount(row.count)} instances` : '') +
    (closed === 'early' ? ', finished early' : closed === 'cut' ? ', stopped there' : '') +
    (row.earlyCount > 0 && closed !== 'early' && closed !== 'cut' ? `, ${fmtCount(row.earlyCount)} finished early` : '') +
    (unreceived ? '' : open ? ', running' : ', done') +
    (row.crashSite === 'last' && !unreceived ? ', crash site' : '');
  const earlyInstances = row.earlyCount > 0 && closed === 'done';
  return (
    <div
      role="treeitem"
      id={rowId(row)}
      aria-level={row.depth + 1}
      aria-expanded={p.expanded}
      aria-selected={p.focused}
      aria-label={label}
      className={`trow${open ? ' open' : ' done'}${p.active ? ' active' : ''}${p.focused ? ' focused' : ''}${row.crashSite ? ` crash-${row.crashSite}` : ''}`}
      onClick={onFocus}
      onDoubleClick={onToggle}
    >
      <span className="tname-cell" style={{ paddingLeft: row.depth * 14 }}>
        <span
          className="twisty"
          onClick={(e) => {
            e.stopPropagation();
            onToggle();
          }}
        >
          {p.expanded === undefined ? '' : p.expanded ? '▾' : '▸'}
        </span>
        <span className="pname" title={row.name}>
          {row.name}
        </span>
        {row.crashSite === 'last' && (
          <span className="crash-tag" title="The worker died in this phase (from the crash record that outlived it).">
            ✕ crash site
          </span>
        )}
      </span>
      <span className="num count">{row.count > 1 ? `×${fmtCount(row.count)}` : ''}</span>
      <span className="bar" aria-hidden="true">
        <span className="fill" style={{ width: `${(frac * 100).toFixed(1)}%` }} />
      </span>
      <StepsCell row={row} open={open} closed={closed} unreceived={unreceived} earlyInstances={earlyInstances} />
      <span className="num elapsed">{unreceived ? '—' : formatDuration(elapsed)}</span>
      <span className="num peak" title={p.memory ? memoryTitle(p.memory) : 'no memory sample fell in this phase'}>
        {p.memory ? formatMemory(p.memory.host) : ''}
      </span>
    </div>
  );
}, sameRow);

/**
 * The steps column. Running: "7/12". Finished: a check and the steps it took, muted ("✓ 6"), so
 * nothing reads as progress that stopped; an early end adds a small mark explained on hover and
 * in the legend. Cut short by the build's end: the count where it stopped ("4/6 ■"), visibly.
 */
function StepsCell({ row, open, closed, unreceived, earlyInstances }: { row: PhaseRow; open: boolean; closed: Closed | undefined; unreceived: boolean; earlyInstances: boolean }) {
  const inst = row.shown;
  if (unreceived) {
    return (
      <span className="num steps muted" title="Its start never reached this view: the events in flight were lost with the worker.">
        —
      </span>
    );
  }
  if (open || closed === undefined) {
    return (
      <span className="num steps">
        {inst.stepsDone}/{inst.nbSteps}
        <span className="early-mark"> </span>
      </span>
    );
  }
  if (closed === 'cut') {
    return (
      <span className="num steps cut" title={`stopped at step ${inst.stepsDone} of ${inst.nbSteps} when the build ended`}>
        {inst.stepsDone}/{inst.nbSteps}
        <span className="cut-mark">■</span>
      </span>
    );
  }
  const mark =
    closed === 'early'
      ? `ended after step ${inst.stepsDone} of ${inst.nbSteps} planned. ${EARLY_TITLE}`
      : earlyInstances
        ? `${fmtCount(row.earlyCount)} of ${fmtCount(row.count)} instances ended before their last planned step. ${EARLY_TITLE}`
        : undefined;
  return (
    <span className="num steps finished" title={mark ?? `finished: ${inst.stepsDone} step${inst.stepsDone === 1 ? '' : 's'}`}>
      <span className="check">✓</span> <span className="step-count">{fmtCount(inst.stepsDone)}</span>
      <span className="early-mark">{mark ? '◂' : ' '}</span>
    </span>
  );
}

function memoryTitle(m: RowMemory): string {
  return `peak host memory ${formatMemory(m.host)}${m.gpu !== null ? `, GPU memory ${formatMemory(m.gpu)}` : ''} while this phase ran`;
}

function rowId(r: PhaseRow): string {
  // Keys contain arbitrary phase names; an id must be a simple token.
  let h = 5381;
  for (let i = 0; i < r.key.length; i++) h = ((h * 33) ^ r.key.charCodeAt(i)) >>> 0;
  return `ph-${h.toString(36)}-${r.depth}`;
}

/** What an empty tree means: nothing built yet, a builder still starting, or a build that ended first. */
function emptyText(live: LiveBuild | null): string {
  if (!live) return 'No build yet.';
  if (!isFinal(live.status)) return 'Waiting for the builder…';
  const last = live.outcome?.lastPhasePath;
  return last?.length ? `No phase reached this view before the build ended; the builder was last in ${last.join(' › ')}.` : 'No phase reached this view before the build ended.';
}
