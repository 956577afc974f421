import { memo, useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import { useStore } from 'zustand';
import { buildLayersText } from '../../shared/build-layers.js';
import { precisionCheckText, type EngineLayer } from '../../shared/engine-layers.js';
import { useApp, useController } from '../hooks.js';
import {
  engineRows,
  fmtMs,
  NO_FILTER,
  precisionShares,
  RowLayout,
  typeChoices,
  visibleRows,
  type EngineRow,
  type EngineSource,
  type RowFilter,
  type SortDir,
  type SortKey,
} from '../lib/engine-view.js';
import { clearSlot, closeEngineView, engineViewStore, loadBuild, loadFiles, openEngineView, type Slot } from '../lib/engine-view-state.js';

const ROW_H = 24;
const DETAIL_H = 132;

const filesOf = (e: DragEvent) => [...e.dataTransfer.files];

/**
 * The Engine panel (beside the build, or a tab in a narrow window): what the build on screen
 * built, in one line, and the ways into the Engine view: this build, another succeeded build, or
 * layer files (trtexec --exportLayerInfo, with --exportProfile) picked or dropped here.
 */
export function EnginePanel() {
  const c = useController();
  const live = useApp((s) => s.live);
  useApp((s) => s.frame);
  const history = useApp((s) => s.history);
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const o = live?.outcome;
  const canRead = typeof c.client.buildLayers === 'function';
  const withLayers = history.filter((r) => r.state === 'succeeded' && r.outcome?.layers);
  const label = (id: string) => {
    const r = history.find((x) => x.id === id);
    return r ? `${id} · ${r.model?.fileName ?? r.modelPath.split(/[\\/]/).pop()}` : id;
  };
  return (
    <section
      className={`panel engine-panel${over ? ' drop-target' : ''}`}
      aria-labelledby="engine-h"
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        e.stopPropagation();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        // Layer files dropped here are the Engine view's, not a model for the app.
        e.preventDefault();
        e.stopPropagation();
        setOver(false);
        void loadFiles(filesOf(e));
      }}
    >
      <div className="panel-head">
        <h2 id="engine-h">Engine layers</h2>
        <button type="button" className="small" onClick={() => openEngineView()}>
          Engine view
        </button>
      </div>
      {o?.status === 'succeeded' && o.layers && live && (
        <p className={`engine-line${o.layers.wider ? ' summary-layers-wider' : ''}`}>
          {buildLayersText(o.layers)}{' '}
          {canRead && (
            <button type="button" className="small" onClick={() => void loadBuild(c.client, live.id, label(live.id))}>
              Show layers
            </button>
          )}
        </p>
      )}
      {canRead && withLayers.length > 0 && (
        <label className="engine-pick">
          <span className="muted">Build</span>
          <select
            aria-label="Show the layers of a build"
            value=""
            onChange={(e) => {
              if (e.target.value) void loadBuild(c.client, e.target.value, label(e.target.value));
            }}
          >
            <option value="">layers of…</option>
            {withLayers.map((r) => (
              <option key={r.id} value={r.id}>
                {label(r.id)}
              </option>
            ))}
          </select>
        </label>
      )}
      <p className="muted engine-files">
        <button type="button" className="small" onClick={() => input.current?.click()}>
          Open layer files…
        </button>{' '}
        or drop them here: a layer JSON (trtexec --exportLayerInfo) and its profile (--exportProfile).
      </p>
      <input
        ref={input}
        type="file"
        accept=".json,application/json"
        multiple
        hidden
        aria-label="Layer files"
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          e.target.value = '';
          if (files.length) void loadFiles(files);
        }}
      />
    </section>
  );
}

const COLUMNS: Array<{ key: SortKey; label: string; num?: boolean }> = [
  { key: 'name', label: 'Layer' },
  { key: 'type', label: 'Type' },
  { key: 'precision', label: 'Precision' },
  { key: 'time', label: 'Time ms', num: true },
  { key: 'time', label: 'Share', num: true },
  { key: 'tactic', label: 'Tactic' },
];

/** The Engine view: one engine's layers, or two side by side, over the whole window. */
export function EngineView() {
  const s = useStore(engineViewStore);
  const c = useController();
  const history = useApp((st) => st.history);
  const dialog = useRef<HTMLDivElement>(null);
  const lastFocus = useRef<Element | null>(null);
  useEffect(() => {
    if (!s.open) return;
    lastFocus.current = document.activeElement;
    dialog.current?.focus();
    return () => (lastFocus.current as HTMLElement | null)?.focus?.();
  }, [s.open]);
  if (!s.open) return null;
  const withLayers = history.filter((r) => r.state === 'succeeded' && r.outcome?.layers);
  const label = (id: string) => {
    const r = history.find((x) => x.id === id);
    return r ? `${id} · ${r.model?.fileName ?? r.modelPath.split(/[\\/]/).pop()}` : id;
  };
  const slotBox = (slot: Slot, src: EngineSource | null) => (
    <SlotBox
      slot={slot}
      src={src}
      builds={typeof c.client.buildLayers === 'function' ? withLayers.map((r) => ({ id: r.id, label: label(r.id) })) : []}
      onBuild={(id) => void loadBuild(c.client, id, label(id), slot)}
    />
  );
  return (
    <div
      className="engine-view-backdrop"
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        e.stopPropagation();
      }}
      onDrop={(e) => {
        e.preventDefault();
        e.stopPropagation();
        void loadFiles(filesOf(e), s.a ? 'b' : 'a');
      }}
    >
      <div
        ref={dialog}
        className="engine-view"
        role="dialog"
        aria-modal="true"
        aria-labelledby="engine-view-h"
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.stopPropagation();
            closeEngineView();
          }
        }}
      >
        <div className="engine-view-head">
          <h2 id="engine-view-h">Engine view</h2>
          {slotBox('a', s.a)}
          {s.a && slotBox('b', s.b)}
          <button type="button" className="small engine-close" onClick={() => closeEngineView()} aria-label="Close the Engine view">
            Close
          </button>
        </div>
        {s.busy && <p className="muted">Reading…</p>}
        {s.error && (
          <p className="engine-msg error" role="alert">
            {s.error}
          </p>
        )}
        {s.a ? (
          <EngineTable a={s.a} b={s.b} />
        ) : (
          !s.busy && <p className="muted engine-empty">Pick a build above, or open or drop a layer JSON (trtexec --exportLayerInfo) with its profile (--exportProfile).</p>
        )}
      </div>
    </div>
  );
}

/** One engine's source in the head: its name, or the ways to pick one. */
function SlotBox({ slot, src, builds, onBuild }: { slot: Slot; src: EngineSource | null; builds: Array<{ id: string; label: string }>; onBuild: (id: string) => void }) {
  const input = useRef<HTMLInputElement>(null);
  const what = slot === 'a' ? 'Engine' : 'Compare with';
  return (
    <div
      className="engine-slot"
      role="group"
      aria-label={slot === 'a' ? 'Engine a' : 'Engine b'}
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        e.stopPropagation();
      }}
      onDrop={(e) => {
        e.preventDefault();
        e.stopPropagation();
        void loadFiles(filesOf(e), slot);
      }}
    >
      <span className="engine-slot-tag">{slot}</span>
      {src ? (
        <>
          <span className="engine-slot-name" title={src.label}>
            {src.label}
          </span>
          <button type="button" className="small" onClick={() => clearSlot(slot)} aria-label={`Remove engine ${slot}`}>
            ×
          </button>
        </>
      ) : (
        <>
          {builds.length > 0 && (
            <select aria-label={`${what}: a build`} value="" onChange={(e) => e.target.value && onBuild(e.target.value)}>
              <option value="">{slot === 'a' ? 'a build…' : 'compare with a build…'}</option>
              {builds.map((b) => (
                <option key={b.id} value={b.id}>
                  {b.label}
                </option>
              ))}
            </select>
          )}
          <button type="button" className="small" onClick={() => input.current?.click()}>
            {slot === 'a' ? 'Open files…' : 'Compare with files…'}
          </button>
          <input
            ref={input}
            type="file"
            accept=".json,application/json"
            multiple
            hidden
            aria-label={`${what}: layer files`}
            onChange={(e) => {
              const files = [...(e.target.files ?? [])];
              e.target.value = '';
              if (files.length) void loadFiles(files, slot);
            }}
          />
        </>
      )}
    </div>
  );
}

function PrecisionBar({ src, tag }: { src: EngineSource; tag?: string }) {
  const shares = precisionShares(src.read.summary);
  return (
    <div className="precision-bar-row">
      {tag && <span className="engine-slot-tag">{tag}</span>}
      <div className="precision-bar" role="img" aria-label={`Layers per precision: ${shares.map((p) => `${p.precision} ${p.count}`).join(', ')}`}>
        {shares.map((p) => (
          <span key={p.precision} className={`pbar p-${p.precision}`} style={{ flexGrow: p.count }} title={`${p.precision}: ${p.count} layers (${(p.share * 100).toFixed(1)}%)`}>
            {p.share >= 0.08 ? `${p.precision} ${p.count}` : ''}
          </span>
        ))}
      </div>
    </div>
  );
}

function summaryText(src: EngineSource): string {
  const s = src.read.summary;
  const parts = [`${s.count} layers`, `TensorRT ${src.read.schema}`];
  if (s.totalMs !== undefined) parts.push(`${fmtMs(s.totalMs)} ms profiled`);
  if (!src.read.detailed) parts.push('names only (built below detailed profiling verbosity)');
  return parts.join(' · ');
}

function EngineTable({ a, b }: { a: EngineSource; b: EngineSource | null }) {
  const rows = useMemo(() => engineRows(a.read, b?.read), [a, b]);
  const types = useMemo(() => typeChoices(rows), [rows]);
  const precisions = useMemo(() => Object.keys({ ...a.read.summary.byPrecision, ...(b?.read.summary.byPrecision ?? {}) }).sort(), [a, b]);
  const [filter, setFilter] = useState<RowFilter>(NO_FILTER);
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir; col: number }>({ key: 'order', dir: 'asc', col: -1 });
  const shown = useMemo(() => visibleRows(rows, filter, sort.key, sort.dir), [rows, filter, sort]);
  const [expanded, setExpanded] = useState<ReadonlySet<EngineRow>>(new Set());
  const [active, setActive] = useState(0);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(400);
  const body = useRef<HTMLDivElement>(null);
  const expandedIdx = useMemo(() => {
    const out: number[] = [];
    if (expanded.size) shown.forEach((r, i) => expanded.has(r) && out.push(i));
    return out;
  }, [shown, expanded]);
  const layout = useMemo(() => new RowLayout(shown.length, ROW_H, DETAIL_H, expandedIdx), [shown.length, expandedIdx]);
  const maxTime = useMemo(() => rows.reduce((m, r) => Math.max(m, r.layer.timeMs ?? 0, r.other?.timeMs ?? 0), 0), [rows]);
  const changed = useMemo(() => (b ? rows.filter((r) => r.change).length : 0), [rows, b]);

  useEffect(() => {
    const el = body.current;
    if (!el) return;
    const measure = () => setViewport(el.clientHeight || 400);
    measure();
    const ro = typeof ResizeObserver === 'function' ? new ResizeObserver(measure) : null;
    ro?.observe(el);
    return () => ro?.disconnect();
  }, []);
  // A new order or filter starts at its top: the rows in view before mean nothing in it.
  useEffect(() => {
    setActive(0);
    setScrollTop(0);
    if (body.current) body.current.scrollTop = 0;
  }, [filter, sort]);

  const { start, end } = layout.window(scrollTop, viewport);
  // Stable callbacks: rows are memoized, so a scroll renders only the rows that came into view.
  const toggle = useCallback(
    (r: EngineRow) =>
      setExpanded((prev) => {
        const next = new Set(prev);
        if (next.has(r)) next.delete(r);
        else next.add(r);
        return next;
      }),
    [],
  );
  const moveTo = (i: number) => {
    const n = Math.max(0, Math.min(shown.length - 1, i));
    setActive(n);
    const el = body.current;
    if (!el) return;
    const top = layout.top(n);
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + ROW_H > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_H - el.clientHeight;
  };
  const onKey = (e: KeyboardEvent) => {
    const page = Math.max(1, Math.floor(viewport / ROW_H) - 1);
    const r = shown[active];
    switch (e.key) {
      case 'ArrowDown':
        moveTo(active + 1);
        break;
      case 'ArrowUp':
        moveTo(active - 1);
        break;
      case 'PageDown':
        moveTo(active + page);
        break;
      case 'PageUp':
        moveTo(active - page);
        break;
      case 'Home':
        moveTo(0);
        break;
      case 'End':
        moveTo(shown.length - 1);
        break;
      case 'Enter':
      case ' ':
        if (r) toggle(r);
        break;
      case 'ArrowRight':
        if (r && !expanded.has(r)) toggle(r);
        break;
      case 'ArrowLeft':
        if (r && expanded.has(r)) toggle(r);
        break;
      default:
        return;
    }
    e.preventDefault();
  };
  // Click: the column's natural order (time: slowest first), again: reversed, a third time: engine order.
  const sortBy = (key: SortKey, col: number) =>
    setSort((s) => {
      const first: SortDir = key === 'time' ? 'desc' : 'asc';
      if (s.col !== col) return { key, dir: first, col };
      return s.dir === first ? { key, dir: first === 'asc' ? 'desc' : 'asc', col } : { key: 'order', dir: 'asc', col: -1 };
    });
  const cols = b ? [...COLUMNS, { key: 'order' as SortKey, label: 'Changed' }] : COLUMNS;
  const rowsShown = shown.slice(start, end);
  const check = a.check;

  return (
    <div className={`engine-body${b ? ' compare-mode' : ''}`}>
      <div className="engine-facts">
        <p>
          <span className="engine-slot-tag">a</span> {summaryText(a)}
          {check && <span className={check.wider.length ? 'summary-layers-wider' : 'ok'}> · {precisionCheckText(check, 3)}</span>}
        </p>
        {b && (
          <p>
            <span className="engine-slot-tag">b</span> {summaryText(b)} · <strong>{changed}</strong> layer{changed === 1 ? '' : 's'} changed (precision, tactic, format, type, or
            only in one)
          </p>
        )}
        <PrecisionBar src={a} tag={b ? 'a' : undefined} />
        {b && <PrecisionBar src={b} tag="b" />}
      </div>
      <div className="engine-filters" role="search" aria-label="Filter layers">
        <input type="search" placeholder="Filter by name" aria-label="Filter by name" value={filter.text} onChange={(e) => setFilter({ ...filter, text: e.target.value })} />
        <select aria-label="Filter by type" value={filter.type} onChange={(e) => setFilter({ ...filter, type: e.target.value })}>
          <option value="">all types</option>
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <select aria-label="Filter by precision" value={filter.precision} onChange={(e) => setFilter({ ...filter, precision: e.target.value })}>
          <option value="">all precisions</option>
          {precisions.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        {b && (
          <label>
            <input type="checkbox" checked={filter.changedOnly} onChange={(e) => setFilter({ ...filter, changedOnly: e.target.checked })} /> changed only
          </label>
        )}
        <span className="muted engine-count" aria-live="polite">
          {shown.length === rows.length ? `${rows.length} layers` : `${shown.length} of ${rows.length} layers`}
        </span>
      </div>
      <div className="engine-grid" role="grid" aria-label="Layers" aria-rowcount={shown.length + 1} aria-colcount={cols.length}>
        <div className="engine-row engine-header" role="row" aria-rowindex={1}>
          {cols.map((col, i) => (
            <div
              key={col.label}
              role="columnheader"
              className={col.num ? 'num' : undefined}
              aria-sort={sort.col === i ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
            >
              {col.label === 'Changed' ? (
                col.label
              ) : (
                <button type="button" className="sort" onClick={() => sortBy(col.key, i)} title={`Sort by ${col.label.toLowerCase()} (again: reverse, then engine order)`}>
                  {col.label}
                  {sort.col === i ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}
                </button>
              )}
            </div>
          ))}
        </div>
        <div
          ref={body}
          className="engine-scroll"
          tabIndex={0}
          role="rowgroup"
          aria-label="Layer rows: arrow keys move, Enter shows the fused operations"
          aria-activedescendant={shown.length ? `layer-row-${active}` : undefined}
          onKeyDown={onKey}
          onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
        >
          <div className="engine-spacer" style={{ height: layout.height }}>
            {rowsShown.map((r, k) => {
              const i = start + k;
              const open = expanded.has(r);
              return (
                <div key={`${r.order}`} className="engine-item" style={{ transform: `translateY(${layout.top(i)}px)` }}>
                  <LayerRow row={r} index={i} active={i === active} open={open} maxTime={maxTime} compare={!!b} onActivate={setActive} onToggle={toggle} />
                  {open && <LayerDetail row={r} compare={!!b} />}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </div>
  );
}

function precisionCell(r: EngineRow, compare: boolean): string {
  const a = r.layer.precision ?? '—';
  if (!compare || !r.other || r.other === r.layer) return a;
  const b = r.other.precision ?? '—';
  return a === b ? a : `${a} → ${b}`;
}

const LayerRow = memo(function LayerRow({
  row,
  index,
  active,
  open,
  maxTime,
  compare,
  onActivate,
  onToggle,
}: {
  row: EngineRow;
  index: number;
  active: boolean;
  open: boolean;
  maxTime: number;
  compare: boolean;
  onActivate: (i: number) => void;
  onToggle: (r: EngineRow) => void;
}) {
  const onClick = () => onActivate(index);
  const l = row.layer;
  const onlyB = compare && row.change?.what.includes('only in b');
  const t = onlyB ? undefined : l.timeMs;
  const tb = compare && row.other && row.other !== l ? row.other.timeMs : undefined;
  const tactic = compare && row.other ? row.other.tactic : l.tactic;
  const cls = ['engine-row', active ? 'active' : '', row.change ? 'changed' : '', row.change?.what.includes('precision') ? 'changed-precision' : ''].filter(Boolean).join(' ');
  return (
    <div
      id={`layer-row-${index}`}
      role="row"
      aria-rowindex={index + 2}
      aria-expanded={open}
      aria-selected={active}
      className={cls}
      onClick={onClick}
      onDoubleClick={() => onToggle(row)}
    >
      <div role="gridcell" className="lname" title={l.name}>
        <button
          type="button"
          className="twisty"
          tabIndex={-1}
          aria-label={open ? 'Hide the fused operations' : 'Show the fused operations'}
          onClick={(e) => {
            e.stopPropagation();
            onClick();
            onToggle(row);
          }}
        >
          {open ? '▾' : '▸'}
        </button>
        <span className="lname-text">{l.name}</span>
      </div>
      <div role="gridcell" title={l.type}>
        {l.type ?? '—'}
      </div>
      <div role="gridcell" className={`prec p-${l.precision ?? 'none'}`}>
        {precisionCell(row, compare)}
      </div>
      <div role="gridcell" className="num">
        {compare && tb !== undefined ? `${fmtMs(t)} / ${fmtMs(tb)}` : fmtMs(t)}
      </div>
      <div role="gridcell" className="num share">
        {t !== undefined && maxTime > 0 && <span className="tbar" style={{ width: `${(t / maxTime) * 100}%` }} />}
        <span className="share-text">{l.percent !== undefined && !onlyB ? `${l.percent.toFixed(1)}%` : ''}</span>
      </div>
      <div
        role="gridcell"
        className="tactic"
        title={compare && row.change?.what.includes('tactic') ? `a: ${row.change.a?.tactic ?? '—'}\nb: ${row.change.b?.tactic ?? '—'}` : tactic}
      >
        {tactic ?? '—'}
      </div>
      {compare && (
        <div role="gridcell" className="what">
          {row.change ? row.change.what.join(', ') : ''}
        </div>
      )}
    </div>
  );
});

function tensorText(ts: EngineLayer['inputs']): string {
  return ts.length ? ts.map((t) => `${t.name}${t.precision ? ` (${t.precision})` : ''}${t.dimensions ? ` [${t.dimensions.join('×')}]` : ''}`).join(', ') : '—';
}

function LayerDetail({ row, compare }: { row: EngineRow; compare: boolean }) {
  const l = row.layer;
  return (
    <div className="layer-detail" role="note" aria-label={`Details of ${l.name}`} style={{ height: DETAIL_H }}>
      <div>
        <span className="muted">Fused operations</span> {l.fused?.length ? l.fused.join(' → ') : <span className="muted">none (one operation{l.type ? `, ${l.type}` : ''})</span>}
      </div>
      <div>
        <span className="muted">Inputs</span> {tensorText(l.inputs)}
      </div>
      <div>
        <span className="muted">Outputs</span> {tensorText(l.outputs)}
      </div>
      <div>
        <span className="muted">Format</span> {l.format ?? '—'}
      </div>
      <div>
        <span className="muted">Tactic</span> {l.tactic ?? '—'}
        {l.weights?.count !== undefined && (
          <>
            {' '}
            · <span className="muted">weights</span> {l.weights.count} {l.weights.type ?? ''}
          </>
        )}
        {l.averageMs !== undefined && (
          <>
            {' '}
            · <span className="muted">average</span> {fmtMs(l.averageMs)} ms
          </>
        )}
      </div>
      {compare && row.change && (
        <div>
          <span className="muted">Changed</span>{' '}
          {row.change.what
            .map((w) => {
              const f = w as 'precision' | 'tactic' | 'format' | 'type';
              return row.change!.a && row.change!.b && f in row.change!.a ? `${w}: ${String(row.change!.a[f])} → ${String(row.change!.b[f])}` : w;
            })
            .join('; ')}
          {row.change.timeRatio !== undefined && ` · time ×${row.change.timeRatio.toFixed(2)}`}
        </div>
      )}
    </div>
  );
}
