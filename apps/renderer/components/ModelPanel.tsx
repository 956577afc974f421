import { useEffect, useRef, type Ref } from 'react';
import type { ModelSummary } from '../../shared/protocol.js';
import { useApp, useController } from '../hooks.js';
import { formatBytes } from '../../shared/format.js';
import { modelTooltip } from '../../shared/file-names.js';
import { fmtCount } from '../lib/panel-numbers.js';
import { modelErrorParts } from '../lib/model-error.js';

const TOP_OPS = 8;

export function ModelPanel() {
  const host = useController().client.capabilities.host;
  const model = useApp((s) => s.model);
  const busy = useApp((s) => s.modelBusy);
  const error = useApp((s) => s.modelError);
  // With no model open (after a reload, say), a build picked from the history still shows the
  // model it was built from.
  const watched = useApp((s) => (s.live ? s.history.find((r) => r.id === s.live!.id) : undefined));
  const errorRef = useRef<HTMLDivElement>(null);
  // The left column scrolls (the options are long): a model error above the fold would go unseen.
  useEffect(() => {
    if (error) errorRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, [error]);
  return (
    <section className="panel model-panel" aria-labelledby="model-h">
      <h2 id="model-h">Model</h2>
      {busy && <p className="muted">Reading model…</p>}
      {error && <ModelError ref={errorRef} message={error} />}
      {error && model && <p className="hint">Still open: {model.displayName}</p>}
      {!model && !busy && !error && !watched?.model && <p className="muted">Open an ONNX model, or drop one onto the window.</p>}
      {!model && !busy && watched?.model && (
        <>
          <p className="hint">The model of the build shown; open a model to build again.</p>
          <Summary s={watched.model} name={watched.model.fileName} title={modelTooltip(watched.modelPath, watched.model.fileName, host)} />
        </>
      )}
      {model && <Summary s={model.summary} name={model.displayName} title={modelTooltip(model.path, model.displayName, host)} />}
    </section>
  );
}

/**
 * A refused model: the service's first line (what, where, how many) as the alert, its problems as
 * a list one opens, so ten problems do not become a wall of red text.
 */
function ModelError({ message, ref }: { message: string; ref: Ref<HTMLDivElement> }) {
  const { head, problems, notes } = modelErrorParts(message);
  return (
    <div className="model-error" ref={ref}>
      <p className="error" role="alert">
        {head}
      </p>
      {problems.length > 0 && (
        <details className="model-problems">
          <summary>
            {problems.length === 1 ? 'The problem' : `The ${problems.length} problems`}
            {notes.some((n) => n.startsWith('…')) ? ' listed' : ''}
          </summary>
          <ol>
            {problems.map((p, i) => (
              <li key={i}>{p}</li>
            ))}
          </ol>
        </details>
      )}
      {notes.map((n, i) => (
        <p key={i} className="hint">
          {n}
        </p>
      ))}
    </div>
  );
}

/** `title`: the name, and the path only where it is the user's own (not the browser's upload copy). */
function Summary({ s, name, title }: { s: ModelSummary; name: string; title: string }) {
  const dynamic = new Map(s.dynamicInputs.map((d) => [d.name, new Set(d.dims)]));
  const ops = Object.entries(s.opHistogram).sort((a, b) => b[1] - a[1]);
  const opset = s.opsetImports.map((o) => `${o.domain || 'ai.onnx'} ${o.version}`).join(', ');
  return (
    <div className="model-summary">
      <dl className="kv">
        <dt>File</dt>
        <dd title={title}>{name}</dd>
        <dt>Size</dt>
        <dd>{formatBytes(s.fileBytes)}</dd>
        <dt>IR / opset</dt>
        <dd>
          {s.irVersion} / {opset || '—'}
        </dd>
        <dt>Producer</dt>
        <dd>{[s.producer.name, s.producer.version].filter(Boolean).join(' ') || '—'}</dd>
        <dt>Nodes</dt>
        <dd>{fmtCount(s.nodeCount)}</dd>
        <dt>Weights</dt>
        <dd>
          {formatBytes(s.initializerBytes)}
          {s.externalData.files.length > 0 && ` (external: ${s.externalData.files.join(', ')})`}
        </dd>
      </dl>
      <h3>Inputs</h3>
      <TensorList tensors={s.inputs} dynamic={dynamic} />
      <h3>Outputs</h3>
      <TensorList tensors={s.outputs} dynamic={new Map()} />
      <h3>Operators</h3>
      <table className="ops" aria-label="Operator histogram">
        <tbody>
          {ops.slice(0, TOP_OPS).map(([op, n]) => (
            <tr key={op}>
              <td>{op}</td>
              <td className="num">{fmtCount(n)}</td>
            </tr>
          ))}
          {ops.length > TOP_OPS && (
            <tr>
              <td className="muted">{ops.length - TOP_OPS} more</td>
              <td className="num muted">{fmtCount(ops.slice(TOP_OPS).reduce((a, [, n]) => a + n, 0))}</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function TensorList({ tensors, dynamic }: { tensors: ModelSummary['inputs']; dynamic: Map<string, Set<string>> }) {
  return (
    <ul className="tensors">
      {tensors.map((t) => {
        const dyn = dynamic.has(t.name);
        return (
          <li key={t.name} className={dyn ? 'dynamic' : undefined}>
            <span className="tname">{t.name}</span> <span className="muted">{t.elemType}</span>{' '}
            {t.rankUnknown ? (
              <span className="shape muted" title="The model file declares no shape for this tensor (not even its rank)">
                (no shape)
              </span>
            ) : (
              <span className="shape">
                [
                {t.shape.map((d, i) => (
                  <span key={i}>
                    {i > 0 && ', '}
                    {/* 0 is a real size (an empty tensor), not a dynamic dimension. */}
                    {typeof d === 'number' && d >= 0 ? d : <mark title="dynamic dimension">{String(d)}</mark>}
                  </span>
                ))}
                ]
              </span>
            )}
            {dyn && <span className="tag">dynamic</span>}
          </li>
        );
      })}
    </ul>
  );
}
