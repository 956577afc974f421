import { useState } from 'react';
import { isSlower, type BuildComparison, type PhaseComparison } from '../../shared/build-compare.js';
import { formatDuration } from '../../shared/format.js';
import { useApp, useController } from '../hooks.js';

/**
 * Two finished builds of this session side by side (docs/engines.md, "compare"): the inputs that
 * differ, then the whole build and each phase with both times aligned on one row and the ratio b/a;
 * a phase that took notably longer in b is marked "slower". Rows are every phase row where both
 * builds saved them, else the top-level phases; layer differences are counted.
 */
export function Compare() {
  const c = useController();
  const client = c.client;
  const history = useApp((s) => s.history);
  const [a, setA] = useState('');
  const [b, setB] = useState('');
  const [result, setResult] = useState<BuildComparison | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (typeof client.compareBuilds !== 'function') return null;
  const done = history.filter((r) => r.state === 'succeeded' && r.engineAvailable);
  const label = (id: string) => {
    const r = history.find((x) => x.id === id);
    return r ? `${id} · ${r.model?.fileName ?? r.modelPath.split(/[\\/]/).pop()}` : id;
  };
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setResult(await client.compareBuilds!(a, b));
    } catch (e) {
      setResult(null);
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const rows: PhaseComparison[] = result ? [result.wall, ...(result.rows ?? result.phases)] : [];
  const ms = (v: number | null) => (v === null ? '—' : formatDuration(v));
  return (
    <section className="panel compare" aria-labelledby="cmp-h">
      <h2 id="cmp-h">Compare</h2>
      {done.length < 2 && <p className="muted">Two succeeded builds of this session can be compared here.</p>}
      {done.length >= 2 && (
        <div className="compare-pick">
          <select aria-label="Build a" value={a} onChange={(e) => setA(e.target.value)}>
            <option value="">build a…</option>
            {done.map((r) => (
              <option key={r.id} value={r.id}>
                {label(r.id)}
              </option>
            ))}
          </select>
          <select aria-label="Build b" value={b} onChange={(e) => setB(e.target.value)}>
            <option value="">build b…</option>
            {done.map((r) => (
              <option key={r.id} value={r.id}>
                {label(r.id)}
              </option>
            ))}
          </select>
          <button type="button" className="small" disabled={!a || !b || busy} onClick={() => void run()}>
            Compare
          </button>
        </div>
      )}
      {error && (
        <p className="engine-msg error" role="alert">
          {error}
        </p>
      )}
      {result && (
        <div className="compare-result">
          {result.inputs.length === 0 ? (
            <p className="muted">Inputs: the same.</p>
          ) : (
            <ul className="compare-inputs" aria-label="Inputs that differ">
              {result.inputs.map((d) => (
                <li key={d.what}>
                  {d.what}: {d.a} → {d.b}
                </li>
              ))}
            </ul>
          )}
          <table className="compare-phases" aria-label="Phase times">
            <thead>
              <tr>
                <th>Phase</th>
                <th className="num">a</th>
                <th className="num">b</th>
                <th className="num">b/a</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p, i) => (
                <tr key={`${i}:${p.name}`} className={isSlower(p) ? 'slower' : undefined}>
                  <td title={p.name}>{p.name.split(' › ').pop()}</td>
                  <td className="num">{ms(p.aMs)}</td>
                  <td className="num">{ms(p.bMs)}</td>
                  <td className="num">
                    {p.ratio === null ? '—' : `×${p.ratio.toFixed(2)}`}
                    {isSlower(p) && <span className="tag">slower</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {result.layers && <p className="muted">{result.layers.length === 0 ? 'Layers: the same.' : `${result.layers.length} layers differ (precision, tactic or format).`}</p>}
        </div>
      )}
    </section>
  );
}
