// The build route (TensorRT 11.1+) as one choice per knob: the library's knob database lists each
// knob's allowed values as a pattern (`-conv_use_long_w=[on|off]`), and a route picks one value
// per knob (`-conv_use_long_w=off -kgen:codegen:cuda_tile=2`). The form keeps the composed route
// string, which is what every surface sends and what trtexec's --setBuildRoute takes. Without a
// database the route is typed as NVIDIA writes it, and "List knobs" asks the host to read the
// database from the library (TensorRT reads it only when asked: it creates a builder).
import type { KnobDatabase } from '../../shared/build-routes.js';
import { composeRoute, routeChoices } from '../../shared/build-routes.js';

/** Reading the database from the library: offered while none is known. */
export interface RouteKnobsRead {
  busy: boolean;
  error: string | null;
  onRead(): void;
}

export function BuildRouteField({ db, route, onChange, read }: { db: KnobDatabase | undefined; route: string; onChange: (route: string) => void; read?: RouteKnobsRead }) {
  if (!db || db.knobs.length === 0) {
    return (
      <>
        <div className="row">
          <label htmlFor="build-route-text">Build route</label>
          <input
            id="build-route-text"
            placeholder="default, or e.g. -conv_use_long_w=off -kgen:codegen:cuda_tile=2"
            value={route}
            spellCheck={false}
            onChange={(e) => onChange(e.target.value)}
          />
          {read && (
            <button type="button" disabled={read.busy} title="Reads the knob database from the TensorRT library (it creates a builder: can take seconds)" onClick={read.onRead}>
              {read.busy ? 'Reading knobs…' : 'List knobs'}
            </button>
          )}
        </div>
        {read?.error && (
          <p className="hint error" role="alert">
            {`Could not list the knobs: ${read.error}`}
          </p>
        )}
      </>
    );
  }
  const choices = routeChoices(route);
  const pick = (option: string, value: string) => onChange(composeRoute({ ...choices, [option]: value }, db));
  return (
    <fieldset className="build-route">
      <legend>Build route</legend>
      {db.knobs.map((k) => (
        <div className="row" key={k.option}>
          <label htmlFor={`knob${k.option}`} title={k.help}>
            {k.option.replace(/^-/, '')}
          </label>
          {k.values.length > 0 ? (
            <select id={`knob${k.option}`} value={choices[k.option] ?? ''} onChange={(e) => pick(k.option, e.target.value)}>
              <option value="">{`not set (default${k.defaultValue !== undefined ? ` ${k.defaultValue}` : ''})`}</option>
              {k.values.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          ) : (
            <input id={`knob${k.option}`} placeholder={k.pattern} value={choices[k.option] ?? ''} spellCheck={false} onChange={(e) => pick(k.option, e.target.value.trim())} />
          )}
        </div>
      ))}
      <p className="hint" aria-label="build route">
        {route.trim() === '' ? 'TensorRT default route' : <code>{route}</code>}
      </p>
    </fieldset>
  );
}
