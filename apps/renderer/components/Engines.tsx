import { useCallback, useEffect, useRef, useState } from 'react';
import type { EngineFile } from '../../shared/build-client.js';
import type { CheckResult } from '../../shared/engine-manifest.js';
import { formatBytes } from '../../shared/format.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { SeparatedName } from './SeparatedName.js';
import { useApp, useController } from '../hooks.js';

/**
 * The engines in the build service's default output folder (builds that named no output path):
 * every build leaves one there, so the folder grows; this is where the user sees and cleans it.
 * Deleting asks once more, inline (a native confirm() would block the page and the event stream);
 * the actions sit above the list, which scrolls on its own, so they stay in view however many files.
 */
export function Engines() {
  const c = useController();
  const client = c.client;
  const supported = typeof client.listEngines === 'function' && typeof client.deleteEngines === 'function';
  const [files, setFiles] = useState<EngineFile[] | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: 'error' | 'info'; text: string } | null>(null);
  /** Each listed engine checked against its manifest (docs/engines.md), by name and modification time. */
  const [checks, setChecks] = useState<Record<string, CheckResult | { error: string }>>({});
  // A build ending (or a new one in the list) may have written an engine: list again then.
  const liveStatus = useApp((s) => s.live?.outcome?.status);
  const liveId = useApp((s) => s.live?.id);
  const historyKey = useApp((s) => s.history.map((r) => `${r.id}:${r.state}`).join(','));

  const refresh = useCallback(async () => {
    if (!supported) return;
    try {
      const list = await client.listEngines!();
      setFiles(list);
      // A selection of files that are gone would delete nothing and confuse the count.
      setSelected((sel) => new Set([...sel].filter((n) => list.some((f) => f.name === n))));
    } catch (e) {
      setMessage({ kind: 'error', text: `Could not list engines: ${(e as Error).message}` });
    }
  }, [client, supported]);

  useEffect(() => {
    void refresh();
  }, [refresh, liveStatus, liveId, historyKey]);

  // One check at a time (each hashes an engine): the list stays responsive, the answers fill in.
  // A file already checked (same name and modification time) is not checked again: the list is
  // read again whenever a build starts or ends, and re-hashing every engine then cost the service
  // CPU during the build and the page a repaint of the whole list per answer. Answers are shown in
  // groups (every CHECK_SHOW_MS) for the same reason.
  const checked = useRef(checks);
  checked.current = checks;
  useEffect(() => {
    if (!files || typeof client.checkEngine !== 'function') return;
    let gone = false;
    void (async () => {
      let batch: Record<string, CheckResult | { error: string }> = {};
      let shownAt = Date.now();
      const show = () => {
        const add = batch;
        batch = {};
        shownAt = Date.now();
        if (Object.keys(add).length > 0) setChecks((c) => ({ ...c, ...add }));
      };
      // A pass that a newer listing replaced stops checking, but what it found still stands
      // (answers are by name and modification time): shown, not hashed again by the next pass.
      for (const f of files) {
        if (gone) break;
        const key = checkKey(f);
        if (key in checked.current || key in batch) continue;
        try {
          batch[key] = await client.checkEngine!(f.name);
        } catch (e) {
          batch[key] = { error: (e as Error).message };
        }
        if (Date.now() - shownAt >= CHECK_SHOW_MS) show();
      }
      show();
    })();
    return () => {
      gone = true;
    };
  }, [files, client]);

  if (!supported) return null;

  const toggle = (name: string) =>
    setSelected((sel) => {
      const next = new Set(sel);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });
  const list = files ?? [];
  const total = list.reduce((n, f) => n + f.bytes, 0);
  const chosen = list.filter((f) => selected.has(f.name));
  const chosenBytes = chosen.reduce((n, f) => n + f.bytes, 0);

  const remove = async () => {
    setBusy(true);
    try {
      const res = await client.deleteEngines!(chosen.map((f) => f.name));
      setMessage(
        res.refused.length > 0
          ? { kind: 'error', text: `Not deleted: ${res.refused.map((r) => `${r.name} (${r.reason})`).join('; ')}` }
          : { kind: 'info', text: `Deleted ${res.deleted.length} ${res.deleted.length === 1 ? 'engine' : 'engines'}.` },
      );
    } catch (e) {
      setMessage({ kind: 'error', text: `Delete failed: ${(e as Error).message}` });
    } finally {
      setConfirming(false);
      setBusy(false);
      await refresh();
    }
  };

  return (
    <section className="panel engines" aria-labelledby="eng-h">
      <div className="panel-head">
        <h2 id="eng-h">Engines</h2>
        <span className="muted" aria-label="total size">
          {files === null ? '' : `${list.length} ${list.length === 1 ? 'file' : 'files'} · ${formatBytes(total)}`}
        </span>
        <button type="button" className="small" onClick={() => void refresh()} title="List the output folder again">
          Refresh
        </button>
      </div>
      {files !== null && list.length === 0 && <p className="muted">No engines of yours in this product's engine folder.</p>}
      {list.length > 0 && !confirming && (
        <div className="engine-actions">
          <button type="button" className="small danger" disabled={chosen.length === 0 || busy} onClick={() => setConfirming(true)}>
            Delete selected{chosen.length > 0 ? ` (${chosen.length})` : ''}
          </button>
        </div>
      )}
      {confirming && (
        <div className="engine-actions" role="alertdialog" aria-label="Confirm delete">
          <span>
            Delete {chosen.length} {chosen.length === 1 ? 'engine' : 'engines'} ({formatBytes(chosenBytes)}) from disk?
          </span>
          <button type="button" className="small danger" disabled={busy} onClick={() => void remove()}>
            Delete
          </button>
          <button type="button" className="small" disabled={busy} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      {message && (
        <p className={message.kind === 'error' ? 'engine-msg error' : 'engine-msg muted'} role={message.kind === 'error' ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {list.length > 0 && (
        <ul className="engine-list">
          {list.map((f) => (
            <li key={f.name}>
              <label
                title={`${f.name}\n${formatBytes(f.bytes)} (${fmtCount(f.bytes)} bytes), ${new Date(f.modifiedAt).toLocaleString()}${f.buildId ? `\nbuild ${f.buildId}` : ''}`}
              >
                <input type="checkbox" checked={selected.has(f.name)} onChange={() => toggle(f.name)} aria-label={`Select ${f.name}`} />
                <SeparatedName name={f.name} className="engine-name" />
                {/* "sim", as in History: the toolbar's "Simulated" badge stays the one element with that word. */}
                {f.simulated && (
                  <span className="tag" title="Simulated: written by the simulated backend, not a TensorRT engine">
                    sim
                  </span>
                )}
              </label>
              <span className="engine-meta muted">
                <span title={`${fmtCount(f.bytes)} bytes`}>{formatBytes(f.bytes)}</span> · {shortDate(f.modifiedAt)}
              </span>
              {typeof client.checkEngine === 'function' && <EngineFit check={checks[checkKey(f)]} onRebuild={(built) => void c.rebuildFrom(built)} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const checkKey = (f: EngineFile) => `${f.name}@${f.modifiedAt}`;
/** Least time (ms) between two showings of new check answers. */
const CHECK_SHOW_MS = 250;

/** fits / needs rebuild (with the first reason) / unknown, and "Rebuild" where the manifest says how. */
function EngineFit({ check, onRebuild }: { check?: CheckResult | { error: string }; onRebuild: (built: NonNullable<CheckResult['built']>) => void }) {
  if (!check) return <span className="engine-fit muted">checking…</span>;
  if ('error' in check)
    return (
      <span className="engine-fit muted" title={check.error}>
        not checked
      </span>
    );
  const first = check.reasons[0];
  const label = check.verdict === 'fits' ? 'fits' : check.verdict === 'rebuild' ? 'needs rebuild' : 'unknown';
  const detail = check.verdict === 'rebuild' && first ? `${first.what}: was ${first.was}, now ${first.now}` : check.verdict === 'unknown' ? (check.missing[0]?.message ?? '') : '';
  const all = [...check.reasons.map((r) => `${r.what}: was ${r.was}, now ${r.now}`), ...check.missing.map((m) => m.message), ...check.notes].join('\n');
  return (
    <span className={`engine-fit fit-${check.verdict}`} title={all}>
      <span className="tag">{label}</span>
      {detail && <span className="engine-fit-reason muted">{detail}</span>}
      {check.built && (
        <button type="button" className="small" onClick={() => onRebuild(check.built!)} title="Open the build form with the settings this engine was built with">
          Rebuild
        </button>
      )}
    </span>
  );
}

/** Today's files by time, older ones by date: enough to tell them apart in a narrow column. */
function shortDate(iso: string): string {
  const d = new Date(iso);
  const now = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return d.toDateString() === now.toDateString() ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}
