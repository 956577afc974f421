// A flame chart of the build: one lane per depth, each row's spans drawn as bars over build time.
// Canvas, redrawn ten times a second while the build runs; spans thinner than a pixel are merged while drawing
// (level of detail), so the cost follows the canvas width, not the number of phases.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useApp } from '../hooks.js';
import { formatDuration } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import type { PhaseRow, PhaseRows } from '../../shared/phase-rows.js';

const LANE_H = 16;
const AXIS_H = 14;
const REDRAW_MS = 100;

interface Hit {
  row: PhaseRow;
  start: number;
  end: number;
  count: number;
  open: boolean;
  x: number;
  y: number;
}

export function Timeline() {
  const live = useApp((s) => s.live);
  // Not the per-frame counter: a flame chart of a minutes-long build does not need 60 redraws
  // (and React renders) a second. It redraws ten times a second while the build runs (REDRAW_MS),
  // and at once on a new build, its end, or a resize.
  const finished = useApp((s) => !!s.live?.outcome);
  const [tick, setTick] = useState(0);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  const [hover, setHover] = useState<Hit | null>(null);
  // The deepest row changes only with the rows: not walked on every redraw.
  const phases = live?.phases;
  // The rows change in place: structureRev stands for them.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const depth = useMemo(() => (phases ? maxDepth(phases) : 0), [phases, phases?.structureRev]);
  const lanes = live ? Math.max(1, depth + 1) : 1;
  const height = AXIS_H + lanes * LANE_H + 2;

  useEffect(() => {
    const el = wrapRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(100, el.clientWidth)));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    if (!live || finished) return;
    const timer = setInterval(() => setTick((t) => t + 1), REDRAW_MS);
    return () => clearInterval(timer);
  }, [live, finished]);

  const endT = live ? Math.max(1, live.elapsedMs(Date.now())) : 1;

  useEffect(() => {
    const cv = canvasRef.current;
    if (!cv) return;
    const dpr = window.devicePixelRatio || 1;
    if (cv.width !== Math.round(width * dpr) || cv.height !== Math.round(height * dpr)) {
      cv.width = Math.round(width * dpr);
      cv.height = Math.round(height * dpr);
    }
    const g = cv.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    draw(g, width, height, live?.phases ?? null, endT);
  }, [tick, width, height, live, finished, endT]);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    if (!live) return;
    const rect = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    setHover(hitTest(live.phases, x, y, width, endT));
  };

  return (
    <section className="panel timeline" aria-labelledby="tl-h">
      <div className="panel-head">
        <h2 id="tl-h">Timeline</h2>
        <span className="muted small-text">{live ? formatDuration(endT) : ''}</span>
      </div>
      {(!live || live.phases.rowsCreated === 0) && (
        <p className="muted empty timeline-empty">
          {live ? 'No phase has reported yet: its bars appear here over build time.' : 'Each phase of a build appears here as a bar over build time, one lane per tree level.'}
        </p>
      )}
      <div className="timeline-wrap" ref={wrapRef} hidden={!live || live.phases.rowsCreated === 0}>
        <canvas
          ref={canvasRef}
          className="timeline-canvas"
          style={{ width, height }}
          role="img"
          aria-label="Timeline of build phases (hover for details)"
          onMouseMove={onMove}
          onMouseLeave={() => setHover(null)}
        />
        {hover && (
          <div className="tip" role="tooltip" style={{ left: Math.min(hover.x + 12, width - 220), top: hover.y + 12 }}>
            <strong>{hover.row.name}</strong>
            <div>start {formatDuration(hover.start)}</div>
            <div>
              duration {formatDuration(hover.end - hover.start)}
              {hover.open ? ' (running)' : ''}
            </div>
            {hover.count > 1 && <div>{fmtCount(hover.count)} instances merged</div>}
            <div>
              steps {hover.row.shown.stepsDone}/{hover.row.shown.nbSteps} (latest)
            </div>
          </div>
        )}
      </div>
    </section>
  );
}

function maxDepth(p: PhaseRows): number {
  let d = 0;
  const walk = (r: PhaseRow) => {
    for (const c of r.children) {
      if (c.depth > d) d = c.depth;
      walk(c);
    }
  };
  walk(p.root);
  return d;
}

function forEachRow(p: PhaseRows, fn: (r: PhaseRow) => void): void {
  const walk = (r: PhaseRow) => {
    for (const c of r.children) {
      fn(c);
      walk(c);
    }
  };
  walk(p.root);
}

// matchMedia, not getComputedStyle: the latter would force a style recalculation every frame.
const darkQuery = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;

function hue(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return h % 360;
}

function draw(g: CanvasRenderingContext2D, w: number, h: number, phases: PhaseRows | null, endT: number): void {
  g.clearRect(0, 0, w, h);
  if (!phases) return;
  const dark = !!darkQuery?.matches;
  const fg = dark ? '#9aa4b2' : '#5b6472';
  g.font = '10px system-ui, sans-serif';
  g.fillStyle = fg;
  g.textBaseline = 'top';
  // Axis: about one tick per 100 px, on a round step.
  const step = niceStep(endT / Math.max(1, w / 100));
  for (let t = 0; t <= endT; t += step) {
    const x = (t / endT) * w;
    g.fillRect(x, AXIS_H - 4, 1, 4);
    if (x < w - 30) g.fillText(formatDuration(t), x + 2, 0);
  }
  const sx = w / endT;
  // Every drawn bar (a run of spans merged at this zoom), per lane, for the labels below.
  const bars: Bar[][] = [];
  const addBar = (r: PhaseRow, x0: number, x1: number) => (bars[r.depth] ??= []).push({ row: r, x0, x1: Math.max(x1, x0 + 1) });
  forEachRow(phases, (r) => {
    const y = AXIS_H + r.depth * LANE_H;
    g.fillStyle = `hsl(${hue(r.name)} 55% ${dark ? 42 : 62}%)`;
    const s = r.spans;
    // Level of detail: runs of spans closer than a pixel become one rectangle.
    let runStart = -1;
    let runEnd = -1;
    const extend = (x0: number, x1: number) => {
      if (runStart >= 0 && x0 - runEnd < 1) {
        if (x1 > runEnd) runEnd = x1;
        return;
      }
      if (runStart >= 0) {
        g.fillRect(runStart, y, Math.max(1, runEnd - runStart), LANE_H - 2);
        addBar(r, runStart, runEnd);
      }
      runStart = x0;
      runEnd = x1;
    };
    for (let i = 0; i < s.start.length; i++) extend(s.start[i] * sx, s.end[i] * sx);
    // An open instance continues the last run when they touch.
    for (const inst of r.open) extend(inst.startT * sx, endT * sx);
    if (runStart >= 0) {
      g.fillRect(runStart, y, Math.max(1, runEnd - runStart), LANE_H - 2);
      addBar(r, runStart, runEnd);
    }
  });
  g.fillStyle = dark ? '#fff' : '#111';
  for (const lane of bars) if (lane) for (const l of placeLabels(lane, w, (t) => g.measureText(t).width)) g.fillText(l.text, l.x, AXIS_H + l.row.depth * LANE_H + 2);
}

interface Bar {
  row: PhaseRow;
  x0: number;
  x1: number;
}

export interface Label {
  row: PhaseRow;
  text: string;
  x: number;
}

/** Narrowest room worth a cut name: fewer than about three letters and the ellipsis helps no one. */
const MIN_LABEL_PX = 24;
const PAD = 3;

/**
 * Labels for one lane's bars: each row's name once, on its widest bar: inside it when it fits
 * (cut with "…" to the bar's width when the bar is at least MIN_LABEL_PX wide), else beside it,
 * to the right, in free room only (up to the next bar or label, or the edge: a name drawn over
 * another phase's bar would name the wrong bar), cut the same way. A bar with no room for either
 * keeps its name on hover (the tooltip). Exported for tests.
 */
export function placeLabels(lane: readonly Bar[], width: number, measure: (text: string) => number): Label[] {
  const widest = new Map<PhaseRow, Bar>();
  for (const b of lane) {
    const w = widest.get(b.row);
    if (!w || b.x1 - b.x0 > w.x1 - w.x0) widest.set(b.row, b);
  }
  const out: Label[] = [];
  // What a label beside a bar must not cover: every bar of the lane and the labels placed so far.
  const taken: Array<[number, number]> = lane.map((b) => [b.x0, b.x1]);
  const pending: Bar[] = [];
  // Inside first: a bar that holds (part of) its name is labelled there.
  for (const b of [...widest.values()].sort((a, c) => a.x0 - c.x0)) {
    const inside = b.x1 - b.x0 - 2 * PAD;
    const text = inside >= MIN_LABEL_PX ? fitText(b.row.name, inside, measure) : '';
    if (text) out.push({ row: b.row, text, x: b.x0 + PAD });
    else pending.push(b);
  }
  // Then beside, to the right, in free room only (never over another bar or label).
  for (const b of pending) {
    const from = b.x1 + PAD;
    if (taken.some(([a, z]) => from >= a && from < z)) continue;
    let to = width;
    for (const [a] of taken) if (a >= from && a < to) to = a;
    to -= PAD;
    if (to - from < MIN_LABEL_PX) continue;
    const text = fitText(b.row.name, to - from, measure);
    if (!text) continue;
    out.push({ row: b.row, text, x: from });
    taken.push([from, from + measure(text)]);
  }
  return out.sort((a, c) => a.x - c.x);
}

/** The name, or its head with "…", in at most `room` px; '' when not even that fits. */
function fitText(name: string, room: number, measure: (text: string) => number): string {
  if (measure(name) <= room) return name;
  let lo = 0;
  let hi = name.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(`${name.slice(0, mid)}…`) <= room) lo = mid;
    else hi = mid - 1;
  }
  return lo >= 2 ? `${name.slice(0, lo).trimEnd()}…` : '';
}

function hitTest(p: PhaseRows, x: number, y: number, w: number, endT: number): Hit | null {
  const depth = Math.floor((y - AXIS_H) / LANE_H);
  if (depth < 0) return null;
  const t = (x / w) * endT;
  const slop = (3 / w) * endT; // 3 px either side
  let best: Hit | null = null;
  forEachRow(p, (r) => {
    if (r.depth !== depth || best) return;
    for (const inst of r.open) {
      if (t >= inst.startT - slop) {
        best = { row: r, start: inst.startT, end: endT, count: 1, open: true, x, y };
        return;
      }
    }
    const s = r.spans;
    for (let i = s.start.length - 1; i >= 0; i--) {
      if (t >= s.start[i] - slop && t <= s.end[i] + slop) {
        best = { row: r, start: s.start[i], end: s.end[i], count: s.count[i], open: false, x, y };
        return;
      }
    }
  });
  return best;
}

function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-3))));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}
