import { useEffect, useState } from 'react';
import type { ModelRef, PluginLibraryLists, PluginOption } from '../../shared/build-client.js';
import { chosenBackend, type TrtCapabilities } from '../../shared/trt-capabilities.js';
import type { BackendInfo } from '../../shared/protocol.js';
import { useApp, useController } from '../hooks.js';
import { FORM_PRECISIONS, formCapabilities, formToOptions, pluginListsToForm, pluginPaths, shapeValueInputs, type FormState } from '../lib/options-form.js';
import { trtexecCommandWithWarnings } from '../lib/trtexec.js';
import { backendReason, message } from '../store/controller.js';
import { knobDatabaseOf } from '../../shared/build-routes.js';
import { BuildRouteField } from './BuildRouteField.js';
import { Field, OptionControls } from './OptionControls.js';
import { ShapeInputs } from './ShapeInputs.js';

export function OptionsForm() {
  const c = useController();
  const form = useApp((s) => s.form);
  const backends = useApp((s) => s.backends);
  const backendsError = useApp((s) => s.backendsError);
  const model = useApp((s) => s.model);
  const formError = useApp((s) => s.formError);
  const routeKnobs = useApp((s) => s.routeKnobs);
  const routeKnobsBusy = useApp((s) => s.routeKnobsBusy);
  const routeKnobsError = useApp((s) => s.routeKnobsError);
  const [copied, setCopied] = useState<string | null>(null);
  const set = (patch: Partial<FormState>) => c.store.setState((s) => ({ form: { ...s.form, ...patch }, formError: null }));
  const trt = backends.find((b) => b.name === 'tensorrt');
  const sim = backends.find((b) => b.name === 'simulated');
  const simUsed = c.simulatorSelected();
  // The TensorRT version builds would use decides which options exist (precision flags: 10.x;
  // build routes: 11.1+) and what the trtexec command says.
  const caps = formCapabilities(form.backend, backends);
  const valueInputs = model ? shapeValueInputs(model.summary) : [];

  // Choices the version in use does not have are dropped, not kept hidden: Build must not send a
  // precision flag to TensorRT 11 because it was ticked while another backend was selected.
  const dropPrecision = !!caps && (form.precision.some((p) => !caps.precisions.includes(p)) || (caps.stronglyTypedImplied && form.stronglyTyped));
  const dropRoute = !!caps && !caps.buildRoutes && form.buildRoute !== '';
  const dropHardware = !!caps && form.hardwareCompatibility !== '' && !(caps.hardwareCompatibility as readonly string[]).includes(form.hardwareCompatibility);
  useEffect(() => {
    if (!caps || (!dropPrecision && !dropRoute && !dropHardware)) return;
    c.store.setState((s) => ({
      form: {
        ...s.form,
        ...(dropPrecision
          ? { precision: s.form.precision.filter((p) => caps.precisions.includes(p)), stronglyTyped: caps.stronglyTypedImplied ? false : s.form.stronglyTyped }
          : {}),
        ...(dropRoute ? { buildRoute: '' } : {}),
        ...(dropHardware ? { hardwareCompatibility: '' } : {}),
      },
    }));
  }, [c, caps, dropPrecision, dropRoute, dropHardware]);

  // Desktop: plugin libraries are code the worker loads, so they are never typed. The host's
  // dialog picks them and the host remembers them per model; the form shows the host's lists for
  // the open model (main refuses a build naming any other library).
  const pickPlugins = !!(c.client.choosePluginLibraries && c.client.forgetPluginLibrary && c.client.pluginLibraries);
  const modelPath = model?.path;
  useEffect(() => {
    const read = c.client.pluginLibraries;
    if (!pickPlugins || !read || !model) return;
    let current = true;
    read.call(c.client, model).then(
      (lists) => current && c.store.setState((s) => ({ form: { ...s.form, ...pluginListsToForm(lists) } })),
      (e: unknown) => current && c.store.setState({ formError: `Plugin libraries: ${message(e)}` }),
    );
    return () => {
      current = false;
    };
    // The model's path decides whose picks these are; a new summary of the same file does not.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [c, pickPlugins, modelPath]);
  const changePlugins = async (change: () => Promise<PluginLibraryLists> | undefined) => {
    try {
      const lists = await change();
      if (lists) set(pluginListsToForm(lists));
    } catch (e) {
      c.store.setState({ formError: `Plugin libraries: ${message(e)}` });
    }
  };

  // The command is recomputed from the form on every render: it can never describe another model
  // or an option since changed.
  const command = model ? commandFor(model, form, caps, chosenBackend(form.backend, backends), c.client.capabilities.host) : null;
  useEffect(() => setCopied(null), [command?.text]);

  const copy = async () => {
    if (!command) return;
    if (!command.ok) {
      c.store.setState({ formError: command.text });
      return;
    }
    try {
      await navigator.clipboard.writeText(command.text);
      setCopied('Copied to the clipboard.');
    } catch {
      // Clipboard can be refused (no focus, permissions): the command is on screen to copy by hand.
      setCopied('The clipboard refused it: select the command above and copy it by hand.');
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
        {/* First: for a dynamic model the shapes are what Build needs before anything else. */}
        {model && <ShapeInputs model={model.summary} form={form} set={set} />}
        {valueInputs.length > 0 && (
          <fieldset>
            <legend>Shape-tensor values (min / opt / max)</legend>
            {valueInputs.map((input) => {
              const f = form.shapeValues[input.name] ?? { min: '', opt: '', max: '' };
              const count = input.shape.length === 0 ? 1 : input.shape[0];
              return (
                <div key={input.name} className="value-row">
                  <span className="tname" title={`${input.elemType} [${input.shape.join(', ')}]: ${count} value(s), e.g. 1x-1`}>
                    {input.name}{' '}
                    <span className="muted">
                      ({count} value{count === 1 ? '' : 's'})
                    </span>
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
        <OptionControls
          group="top"
          form={form}
          set={set}
          caps={caps}
          custom={{
            backend: () => (
              <>
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
                {backendReason(trt) && (
                  <details className="hint">
                    <summary>TensorRT unavailable: why?</summary>
                    {backendReason(trt)}
                  </details>
                )}
                {backendsError && <p className="error">Backends: {backendsError}</p>}
                {simUsed && sim?.emulates && <p className="hint">The simulator behaves as TensorRT {sim.emulates}: no GPU is used, no real engine is made.</p>}
              </>
            ),
            optLevel: () => (
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
            ),
          }}
        />
        <fieldset>
          <legend>Precision</legend>
          <OptionControls
            group="precision"
            form={form}
            set={set}
            caps={caps}
            custom={{
              stronglyTyped: () =>
                caps?.stronglyTypedImplied ? (
                  <p className="hint">
                    Strongly typed (TensorRT {caps.version} has no precision flags: precision comes from the model; cast or quantize it offline, e.g. with NVIDIA Model Optimizer).
                  </p>
                ) : (
                  <label className="check">
                    <input type="checkbox" checked={form.stronglyTyped} onChange={(e) => set({ stronglyTyped: e.target.checked })} />
                    Strongly typed
                  </label>
                ),
              precision: () =>
                FORM_PRECISIONS.filter((p) => !caps || caps.precisions.includes(p)).map((p) => (
                  <label key={p} className="check" title={form.stronglyTyped ? 'Precision comes from the model when strongly typed' : undefined}>
                    <input
                      type="checkbox"
                      disabled={form.stronglyTyped}
                      checked={!form.stronglyTyped && form.precision.includes(p)}
                      onChange={(e) => set({ precision: e.target.checked ? [...form.precision, p] : form.precision.filter((x) => x !== p) })}
                    />
                    {p}
                    {(caps?.deprecatedPrecisions.includes(p) || caps?.weakTypingDeprecated) && <span className="muted"> (deprecated)</span>}
                    {p === 'int8' && form.precision.includes('int8') && (
                      <span className="muted" role="note">
                        {' '}
                        without Q/DQ nodes: placeholder ranges, accuracy meaningless (performance only)
                      </span>
                    )}
                  </label>
                )),
            }}
          />
        </fieldset>
        <fieldset>
          <legend>Memory pools (empty: TensorRT&apos;s default)</legend>
          <OptionControls group="pools" form={form} set={set} caps={caps} />
        </fieldset>
        <OptionControls
          group="build"
          form={form}
          set={set}
          caps={caps}
          custom={{
            ...Object.fromEntries(
              (['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize'] as const).map((field) => [
                field,
                () =>
                  pickPlugins ? (
                    <PluginPicker
                      field={field}
                      paths={pluginPaths(form, field)}
                      model={model}
                      onAdd={() => void changePlugins(() => (model ? c.client.choosePluginLibraries!(model, field) : undefined))}
                      onRemove={(p) => void changePlugins(() => (model ? c.client.forgetPluginLibrary!(model, field, p) : undefined))}
                    />
                  ) : (
                    <>
                      <Field label={PLUGIN_LABELS[field]}>
                        <textarea
                          rows={1}
                          placeholder="none"
                          title="One .so path per line"
                          value={form[field]}
                          spellCheck={false}
                          onChange={(e) => set({ [field]: e.target.value })}
                        />
                      </Field>
                      {field === 'pluginsToSerialize' && (
                        <p className="hint">
                          Plugin library paths are on the machine that runs the builds. The service loads only libraries inside the folders its operator named with --plugin-dir,
                          and refuses any other path, naming the folders it allows.
                        </p>
                      )}
                    </>
                  ),
              ]),
            ),
            buildRoute: () => {
              if (!caps?.buildRoutes) return null;
              const routeBackend = chosenBackend(form.backend, backends);
              // The listing carries the database once it was read (the host keeps it on disk);
              // until then the picker offers to read it from the library.
              const db = knobDatabaseOf(routeBackend) ?? (routeBackend ? routeKnobs[routeBackend.name] : undefined);
              return (
                <BuildRouteField
                  db={db}
                  route={form.buildRoute}
                  onChange={(buildRoute) => set({ buildRoute })}
                  read={c.client.readBuildRoutes ? { busy: routeKnobsBusy, error: routeKnobsError, onRead: () => void c.readBuildRoutes(form.backend) } : undefined}
                />
              );
            },
          }}
        />
        <OptionControls
          group="cache"
          form={form}
          set={set}
          caps={caps}
          custom={{
            pinnedCache: () => (
              <Field label="Pinned timing cache">
                <input
                  placeholder="none"
                  title="Build from this timing cache and fail at the first tactic it does not hold (same cache and inputs, same tactics); the file is not written"
                  value={form.pinnedCache}
                  onChange={(e) => set({ pinnedCache: e.target.value })}
                  spellCheck={false}
                />
              </Field>
            ),
            timingCache: () => (
              <>
                <Field label="Timing cache file">
                  <input placeholder="none" value={form.timingCache} onChange={(e) => set({ timingCache: e.target.value })} spellCheck={false} />
                </Field>
                {c.client.chooseTimingCache ? (
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
                ) : (
                  <p className="hint">A full path on the machine that runs the builds (the service opens it there); created when missing.</p>
                )}
              </>
            ),
          }}
        />
        <Field label="Time budget (s)">
          <input inputMode="decimal" placeholder="none" value={form.timeBudget} onChange={(e) => set({ timeBudget: e.target.value })} />
        </Field>
        <fieldset disabled={!simUsed}>
          <legend>Simulator{simUsed ? '' : ' (not used)'}</legend>
          <OptionControls
            group="simulator"
            form={form}
            set={set}
            caps={caps}
            custom={{
              simFault: () => (
                <>
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
                </>
              ),
            }}
          />
        </fieldset>
        {command && (
          <div className="cmd-box">
            <div className="cmd-head">
              <button type="button" className="small" onClick={() => void copy()} disabled={!command.ok}>
                Copy as trtexec command
              </button>
              <span className="hint" aria-live="polite">
                {copied ?? ''}
              </span>
            </div>
            {command.ok ? (
              <pre className="cmd" aria-label="trtexec command">
                {command.text}
              </pre>
            ) : (
              <p className="hint">The trtexec command appears once the options are complete. {command.text}</p>
            )}
            {command.warnings.map((w) => (
              <p key={w} className="warning" role="note">
                ⚠ {w}
              </p>
            ))}
          </div>
        )}
      </form>
    </section>
  );
}

const PLUGIN_LABELS: Record<PluginOption, string> = {
  staticPlugins: 'Static plugin libraries',
  dynamicPlugins: 'Dynamic plugin libraries',
  pluginsToSerialize: 'Plugin libraries to serialize',
};

/** Desktop: the libraries picked for the open model, each removable, and "Add…" for the host's dialog. */
function PluginPicker(props: { field: PluginOption; paths: string[]; model: ModelRef | null; onAdd(): void; onRemove(path: string): void }) {
  const label = PLUGIN_LABELS[props.field];
  return (
    <Field label={label}>
      <div role="group" aria-label={label} className="plugin-picks">
        {props.paths.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <ul>
            {props.paths.map((p) => (
              <li key={p}>
                <code title={p}>{p}</code>{' '}
                <button type="button" className="small" aria-label={`Remove ${p}`} onClick={() => props.onRemove(p)}>
                  Remove
                </button>
              </li>
            ))}
          </ul>
        )}
        <button
          type="button"
          className="small"
          disabled={!props.model}
          title={props.model ? 'Pick plugin libraries (remembered for this model)' : 'Open a model first: plugin libraries are remembered per model'}
          onClick={props.onAdd}
        >
          Add…
        </button>
      </div>
    </Field>
  );
}

/**
 * The trtexec command for the open model and the form as it stands. In the browser the model is
 * an uploaded copy: the command names the user's file instead of the service's upload path.
 */
function commandFor(
  model: ModelRef,
  form: FormState,
  caps: TrtCapabilities | undefined,
  backend: BackendInfo | undefined,
  host: 'web' | 'electron',
): { ok: boolean; text: string; warnings: string[] } {
  const o = formToOptions(form, model.summary, false, caps);
  if (!o.ok) return { ok: false, text: o.error, warnings: [] };
  const modelPath = host === 'web' ? model.displayName : model.path;
  // The engine gets the name the service would give it on the backend in use.
  return { ok: true, ...trtexecCommandWithWarnings({ modelPath, options: o.options, trtVersion: caps?.version, capabilities: caps, backend }) };
}
