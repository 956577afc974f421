import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { Severity } from '../../shared/protocol.js';
import { useApp } from '../hooks.js';
import { formatDuration } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import type { LogLine } from '../store/log-ring.js';

const ROW_H = 18;
const SEVERITIES: Severity[] = ['internal_error', 'error', 'warning', 'info', 'verbose'];
const LABEL: Record<Severity, string> = { internal_error: 'internal', error: 'error', warning: 'warning', info: 'info', verbose: 'verbose' };

/** Build log: virtual rows, severity threshold, text search, copy of what is shown. */
export function LogPanel() {
  const live = useApp((s) => s.live);
  // The ring's revision, not the frame counter: a fast build bumps `frame` every animation frame
  // while logging rarely, and re-rendering this panel (its inputs included) each frame was pure cost.
  useApp((s) => s.live?.logs.rev);
  const [minSev, setMinSev] = useState<Severity>('info');
  // A build that asked for TensorRT's verbose log shows it: the filter opens to everything once
  // that build starts (the user may narrow it again).
  const verboseAsked = useApp((s) => s.live?.view.started?.options?.verboseLog === true);
  const liveId = live?.id;
  useEffect(() => {
    if (verboseAsked) setMinSev('verbose');
  }, [verboseAsked, liveId]);
  const [query, setQuery] = useState('');
  const [copied, setCopied] = useState(false);
  const scrollRef = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewH, setViewH] = useState(150);
  const stick = useRef(true);
  const logs = live?.logs;
  const rev = logs?.rev ?? 0;

  const lines = useMemo(() => {
    if (!logs) return [] as LogLine[];
    const max = SEVERITIES.indexOf(minSev);
    const q = query.trim().toLowerCase();
    const out: LogLine[] = [];
    for (let i = 0; i < logs.size; i++) {
      const l = logs.at(i);
      if (SEVERITIES.indexOf(l.severity) > max) continue;
      if (q && !l.message.toLowerCase().includes(q)) continue;
      out.push(l);
    }
    return out;
    // rev stands for the ring's contents
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [logs, rev, minSev, query]);

  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setViewH(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // Stay at the bottom while new lines arrive, unless the user scrolled up to read.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [lines.length]);

  const copy = async () => {
    const text = lines.map((l) => `${formatDuration(l.t)}\t${l.severity}\t${l.message}`).join('\n');
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      setCopied(false);
    }
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW_H) - 5);
  const last = Math.min(lines.length, Math.ceil((scrollTop + viewH) / ROW_H) + 5);
  return (
    <section className="panel logs" aria-labelledby="log-h">
      <div className="panel-head">
        <h2 id="log-h">Log</h2>
        <label className="inline">
          <span className="muted">show</span>
          <select aria-label="Minimum severity" value={minSev} onChange={(e) => setMinSev(e.target.value as Severity)}>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s === 'verbose' ? 'everything' : `${LABEL[s]} and worse`}
              </option>
            ))}
          </select>
        </label>
        <input type="search" aria-label="Search the log" placeholder="Search" value={query} onChange={(e) => setQuery(e.target.value)} />
        <span className="muted small-text">
          {fmtCount(lines.length)} shown{logs && logs.dropped > 0 ? ` · ${fmtCount(logs.dropped)} oldest dropped` : ''}
        </span>
        <button type="button" className="small" onClick={() => void copy()} disabled={lines.length === 0}>
          {copied ? 'Copied' : 'Copy log'}
        </button>
      </div>
      <div
        className="log-scroll"
        ref={scrollRef}
        role="log"
        aria-label="Build log"
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          setScrollTop(el.scrollTop);
          stick.current = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_H;
        }}
      >
        <div className="log-inner" style={{ height: lines.length * ROW_H }}>
          {lines.slice(first, last).map((l, k) => (
            <div key={l.seq} className={`lrow sev-${l.severity}`} style={{ transform: `translateY(${(first + k) * ROW_H}px)` }}>
              <span className="lt num">{formatDuration(l.t)}</span>
              <span className="ls">{LABEL[l.severity]}</span>
              <span className="lm" title={l.message}>
                {l.message}
              </span>
            </div>
          ))}
        </div>
      </div>
    </section>
  );
}
