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
      <div className="timeline-wrap" ref={wrapRef}>
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
            <div>duration {formatDuration(hover.end - hover.start)}{hover.open ? ' (running)' : ''}</div>
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
  forEachRow(phases, (r) => {
    const y = AXIS_H + r.depth * LANE_H;
    g.fillStyle = `hsl(${hue(r.name)} 55% ${dark ? 42 : 62}%)`;
    const s = r.spans;
    // Level of detail: runs of spans closer than a pixel become one rectangle.
    let runStart = -1;
    let runEnd = -1;
    for (let i = 0; i < s.start.length; i++) {
      const x0 = s.start[i] * sx;
      const x1 = s.end[i] * sx;
      if (runStart >= 0 && x0 - runEnd < 1) {
        if (x1 > runEnd) runEnd = x1;
        continue;
      }
      if (runStart >= 0) g.fillRect(runStart, y, Math.max(1, runEnd - runStart), LANE_H - 2);
      runStart = x0;
      runEnd = x1;
    }
    if (runStart >= 0) g.fillRect(runStart, y, Math.max(1, runEnd - runStart), LANE_H - 2);
    for (const inst of r.open) {
      const x0 = inst.startT * sx;
      g.fillRect(x0, y, Math.max(1, endT * sx - x0), LANE_H - 2);
    }
  });
  // Names on bars wide enough to hold them, from the latest span of each row.
  g.fillStyle = dark ? '#fff' : '#111';
  forEachRow(phases, (r) => {
    const y = AXIS_H + r.depth * LANE_H + 2;
    const open = r.open[r.open.length - 1];
    const n = r.spans.start.length;
    const [a, b] = open ? [open.startT, endT] : n > 0 ? [r.spans.start[n - 1], r.spans.end[n - 1]] : [0, 0];
    const x0 = a * sx;
    const width = (b - a) * sx;
    if (width > 40) {
      g.save();
      g.beginPath();
      g.rect(x0, y - 2, width, LANE_H);
      g.clip();
      g.fillText(r.name, x0 + 3, y);
      g.restore();
    }
  });
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
