import { cloneElement, useEffect, useId, useState, type ReactElement } from 'react';
import { useApp, useController } from '../hooks.js';
import { FORM_PRECISIONS, formCapabilities, formToOptions, shapeValueInputs, type FormState } from '../lib/options-form.js';
import { trtexecCommand } from '../lib/trtexec.js';
import { backendReason } from '../store/controller.js';

export function OptionsForm() {
  const c = useController();
  const form = useApp((s) => s.form);
  const backends = useApp((s) => s.backends);
  const backendsError = useApp((s) => s.backendsError);
  const model = useApp((s) => s.model);
  const formError = useApp((s) => s.formError);
  const [copied, setCopied] = useState<string | null>(null);
  const set = (patch: Partial<FormState>) => c.store.setState((s) => ({ form: { ...s.form, ...patch }, formError: null }));
  const trt = backends.find((b) => b.name === 'tensorrt');
  const sim = backends.find((b) => b.name === 'simulated');
  const simUsed = c.simulatorSelected();
  // The TensorRT version builds would use decides which options exist (precision flags: 10.x;
  // build routes: 11.1+) and what the trtexec command says.
  const caps = formCapabilities(form.backend, backends);
  const chosenTrt = form.backend !== 'simulated' && !simUsed ? trt : undefined;
  const valueInputs = model ? shapeValueInputs(model.summary) : [];
  const dynamicInputs = (model?.summary.dynamicInputs ?? []).filter((d) => !valueInputs.some((v) => v.name === d.name));

  // Choices the version in use does not have are dropped, not kept hidden: Build must not send a
  // precision flag to TensorRT 11 because it was ticked while another backend was selected.
  const dropPrecision = !!caps && (form.precision.some((p) => !caps.precisions.includes(p)) || (caps.stronglyTypedImplied && form.stronglyTyped));
  const dropRoute = !!caps && !caps.buildRoutes && form.buildRoute !== '';
  useEffect(() => {
    if (!caps || (!dropPrecision && !dropRoute)) return;
    c.store.setState((s) => ({
      form: {
        ...s.form,
        ...(dropPrecision ? { precision: s.form.precision.filter((p) => caps.precisions.includes(p)), stronglyTyped: caps.stronglyTypedImplied ? false : s.form.stronglyTyped } : {}),
        ...(dropRoute ? { buildRoute: '' } : {}),
      },
    }));
  }, [c, caps, dropPrecision, dropRoute]);

  const copy = async () => {
    if (!model) return;
    const o = formToOptions(form, model.summary, false, caps);
    if (!o.ok) {
      c.store.setState({ formError: o.error });
      return;
    }
    const modelPath = c.client.capabilities.host === 'web' ? model.displayName : model.path;
    const r = { command: trtexecCommand({ modelPath, options: o.options, trtVersion: caps?.version }) };
    try {
      await navigator.clipboard.writeText(r.command);
      setCopied(r.command);
    } catch {
      // Clipboard can be refused (no focus, permissions): show the command to copy by hand.
      setCopied(r.command);
    }
  };

  return (
    <section className="panel options" aria-labelledby="opts-h">
      <h2 id="opts-h">Build options</h2>
      {formError && (
        <p className="error" role="alert">
          {formError}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void c.build();
        }}
      >
        <Field label="Backend">
            <select value={form.backend} onChange={(e) => set({ backend: e.target.value as FormState['backend'] })}>
            <option value="auto">auto</option>
            <option value="tensorrt" disabled={!!backendReason(trt)}>
              TensorRT{trt?.version ? ` ${trt.version}` : ''}
              {backendReason(trt) ? ' (unavailable)' : ''}
            </option>
            <option value="simulated" disabled={!!backendReason(sim)}>
              simulated
            </option>
          </select>
          </Field>
        {backendReason(trt) && <p className="hint">TensorRT unavailable: {backendReason(trt)}</p>}
        {backendsError && <p className="error">Backends: {backendsError}</p>}
        <Field label="Optimization level">
            <select value={form.optLevel} onChange={(e) => set({ optLevel: Number(e.target.value) })}>
            {[0, 1, 2, 3, 4, 5].map((n) => (
              <option key={n} value={n}>
                {n}
                {n === 3 ? ' (default)' : ''}
              </option>
            ))}
          </select>
          </Field>
        <Field label="Workspace (MiB)">
            <input inputMode="numeric" placeholder="default" value={form.workspaceMiB} onChange={(e) => set({ workspaceMiB: e.target.value })} />
          </Field>
        <fieldset>
          <legend>Precision</legend>
          {caps?.stronglyTypedImplied ? (
            <p className="hint">
              Strongly typed (TensorRT {caps.version} has no precision flags: precision comes from the model; cast or quantize it
              offline, e.g. with NVIDIA Model Optimizer).
            </p>
          ) : (
            <label className="check">
              <input type="checkbox" checked={form.stronglyTyped} onChange={(e) => set({ stronglyTyped: e.target.checked })} />
              Strongly typed
            </label>
          )}
          {FORM_PRECISIONS.filter((p) => !caps || caps.precisions.includes(p)).map((p) => (
            <label key={p} className="check" title={form.stronglyTyped ? 'Precision comes from the model when strongly typed' : undefined}>
              <input
                type="checkbox"
                disabled={form.stronglyTyped}
                checked={!form.stronglyTyped && form.precision.includes(p)}
                onChange={(e) => set({ precision: e.target.checked ? [...form.precision, p] : form.precision.filter((x) => x !== p) })}
              />
              {p}
            </label>
          ))}
        </fieldset>
        <Field label="Device">
          <input inputMode="numeric" placeholder="0" value={form.device} onChange={(e) => set({ device: e.target.value })} />
        </Field>
        {caps?.buildRoutes && (
          <Field label="Build route">
            {chosenTrt?.buildRoutes?.length ? (
              <select value={form.buildRoute} onChange={(e) => set({ buildRoute: e.target.value })}>
                <option value="">not set (TensorRT default)</option>
                {chosenTrt.buildRoutes.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            ) : (
              <input placeholder="default" value={form.buildRoute} spellCheck={false} onChange={(e) => set({ buildRoute: e.target.value })} />
            )}
          </Field>
        )}
        <Field label="Timing cache file">
            <input placeholder="none" value={form.timingCache} onChange={(e) => set({ timingCache: e.target.value })} spellCheck={false} />
          </Field>
        {c.client.chooseTimingCache && (
          <button
            type="button"
            className="small"
            onClick={async () => {
              const p = await c.client.chooseTimingCache!();
              if (p) set({ timingCache: p });
            }}
          >
            Choose timing cache…
          </button>
        )}
        {dynamicInputs.length > 0 && (
          <fieldset>
            <legend>Shapes (min / opt / max)</legend>
            {dynamicInputs.map((d) => {
              const f = form.shapes[d.name] ?? { min: '', opt: '', max: '' };
              return (
                <div key={d.name} className="shape-row">
                  <span className="tname" title={`dynamic: ${d.dims.join(', ')}`}>
                    {d.name}
                  </span>
                  {(['min', 'opt', 'max'] as const).map((w) => (
                    <input
                      key={w}
                      aria-label={`${d.name} ${w} shape`}
                      placeholder={w}
                      value={f[w]}
                      spellCheck={false}
                      onChange={(e) => set({ shapes: { ...form.shapes, [d.name]: { ...f, [w]: e.target.value } } })}
                    />
                  ))}
                </div>
              );
            })}
          </fieldset>
        )}
        {valueInputs.length > 0 && (
          <fieldset>
            <legend>Shape-tensor values (min / opt / max)</legend>
            {valueInputs.map((input) => {
              const f = form.shapeValues[input.name] ?? { min: '', opt: '', max: '' };
              const count = input.shape.length === 0 ? 1 : input.shape[0];
              return (
                <div key={input.name} className="shape-row">
                  <span className="tname" title={`${input.elemType} [${input.shape.join(', ')}]: ${count} value(s), e.g. 1x-1`}>
                    {input.name}
                  </span>
                  {(['min', 'opt', 'max'] as const).map((w) => (
                    <input
                      key={w}
                      aria-label={`${input.name} ${w} values`}
                      placeholder={w}
                      value={f[w]}
                      spellCheck={false}
                      onChange={(e) => set({ shapeValues: { ...form.shapeValues, [input.name]: { ...f, [w]: e.target.value } } })}
                    />
                  ))}
                </div>
              );
            })}
          </fieldset>
        )}
        <fieldset disabled={!simUsed}>
          <legend>Simulator{simUsed ? '' : ' (not used)'}</legend>
          <Field label="Duration (s)">
            <input inputMode="decimal" placeholder="auto" value={form.simDuration} onChange={(e) => set({ simDuration: e.target.value })} />
          </Field>
          <Field label="Seed">
            <input inputMode="numeric" placeholder="1 (default)" value={form.simSeed} onChange={(e) => set({ simSeed: e.target.value })} />
          </Field>
          <Field label="Fault">
            <select value={form.simFault} onChange={(e) => set({ simFault: e.target.value as FormState['simFault'] })}>
              <option value="">none</option>
              <option value="fail">fail</option>
              <option value="crash">crash</option>
              <option value="hang">hang</option>
            </select>
          </Field>
          {form.simFault && (
            <Field label="…at phase">
            <input placeholder="any" value={form.simFaultPhase} onChange={(e) => set({ simFaultPhase: e.target.value })} />
          </Field>
          )}
        </fieldset>
        <button type="button" className="small" onClick={() => void copy()} disabled={!model}>
          Copy as trtexec command
        </button>
        {copied && (
          <pre className="cmd" aria-label="trtexec command">
            {copied}
          </pre>
        )}
      </form>
    </section>
  );
}

/**
 * A label bound to its control by id. Wrapping the control inside the label would make the
 * label's text include the control's options ("Optimization level 0 1 2 3 (default)…").
 */
function Field({ label, children }: { label: string; children: ReactElement<{ id?: string }> }) {
  const id = useId();
  return (
    <div className="row">
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id })}
    </div>
  );
}
