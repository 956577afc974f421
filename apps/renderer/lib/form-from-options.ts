// Build options (as a manifest records them: optionsFromManifest) → the options form's fields, for
// "Rebuild" in the engines panel: the form opens with the settings the engine was built with.
// Fields the options leave out keep the form's defaults. The table's generic controls are filled
// from the table (a new option with a generic control comes back by itself); the controls the form
// draws by hand are filled here. apps/renderer/test/form-from-options.test.ts sends every option
// a manifest records through optionsFromManifest → here → formToOptions and back.
import type { BuildOptionsInput, ShapeRange, ShapeValueRange } from '../../shared/protocol.js';
import { DEFAULT_FORM, FORM_PRECISIONS, GENERIC_FORM_OPTIONS, type FormPrecision, type FormState, type ShapeFields } from './options-form.js';

const fields = (r: ShapeRange | ShapeValueRange): ShapeFields => ({ min: r.min.join('x'), opt: r.opt.join('x'), max: r.max.join('x') });

export function formFromOptions(o: BuildOptionsInput): FormState {
  const generic: Record<string, unknown> = {};
  for (const e of GENERIC_FORM_OPTIONS) {
    const v = (o as Record<string, unknown>)[e.field];
    if (v === undefined) continue;
    // Text fields hold what would be typed; checkboxes and selects hold the value itself.
    generic[e.field] = e.form!.control === 'checkbox' || e.form!.control === 'select' ? v : String(v);
  }
  const shapes = Array.isArray(o.shapes) ? {} : (o.shapes ?? {});
  const [fault, ...phase] = (o.simFault ?? '').split('@');
  const lines = (paths: string[] | undefined) => (paths ?? []).join('\n');
  return {
    ...DEFAULT_FORM,
    ...(generic as Partial<FormState>),
    backend: o.backend ?? 'auto',
    optLevel: o.optLevel ?? DEFAULT_FORM.optLevel,
    stronglyTyped: o.stronglyTyped ?? false,
    precision: (o.precision ?? []).filter((p): p is FormPrecision => (FORM_PRECISIONS as readonly string[]).includes(p)),
    timingCache: o.timingCache ?? '',
    pinnedCache: o.pinnedCache ?? '',
    shapes: Object.fromEntries(Object.entries(shapes).map(([k, r]) => [k, fields(r)])),
    shapeValues: Object.fromEntries(Object.entries(o.shapeValues ?? {}).map(([k, r]) => [k, fields(r)])),
    buildRoute: o.buildRoute ?? '',
    staticPlugins: lines(o.staticPlugins),
    dynamicPlugins: lines(o.dynamicPlugins),
    pluginsToSerialize: lines(o.pluginsToSerialize),
    simFault: (fault as FormState['simFault']) ?? '',
    simFaultPhase: phase.join('@'),
  };
}
