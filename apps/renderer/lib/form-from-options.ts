// Build options (as a manifest records them: optionsFromManifest) → the options form's fields, for
// "Rebuild" in the engines panel: the form opens with the settings the engine was built with.
// Fields the options leave out keep the form's defaults.
import type { BuildOptionsInput, ShapeRange, ShapeValueRange } from '../../shared/protocol.js';
import { DEFAULT_FORM, FORM_PRECISIONS, type FormPrecision, type FormState, type ShapeFields } from './options-form.js';

const fields = (r: ShapeRange | ShapeValueRange): ShapeFields => ({ min: r.min.join('x'), opt: r.opt.join('x'), max: r.max.join('x') });
const text = (n: number | undefined) => (n === undefined ? '' : String(n));

export function formFromOptions(o: BuildOptionsInput): FormState {
  const shapes = Array.isArray(o.shapes) ? {} : (o.shapes ?? {});
  return {
    ...DEFAULT_FORM,
    backend: o.backend ?? 'auto',
    optLevel: o.optLevel ?? DEFAULT_FORM.optLevel,
    workspaceMiB: text(o.workspaceMiB),
    stronglyTyped: o.stronglyTyped ?? false,
    precision: (o.precision ?? []).filter((p): p is FormPrecision => (FORM_PRECISIONS as readonly string[]).includes(p)),
    timingCache: o.timingCache ?? '',
    inferCacheMisses: o.inferCacheMisses ?? false,
    verboseLog: o.verboseLog ?? false,
    shapes: Object.fromEntries(Object.entries(shapes).map(([k, r]) => [k, fields(r)])),
    shapeValues: Object.fromEntries(Object.entries(o.shapeValues ?? {}).map(([k, r]) => [k, fields(r)])),
    device: text(o.device),
    buildRoute: o.buildRoute ?? '',
    tf32: o.tf32 ?? true,
    profilingVerbosity: o.profilingVerbosity ?? '',
    hardwareCompatibility: o.hardwareCompatibility ?? '',
    maxAuxStreams: text(o.maxAuxStreams),
    tacticSharedMemoryKiB: text(o.tacticSharedMemoryKiB),
    tacticDramMiB: text(o.tacticDramMiB),
    simDuration: text(o.simDuration),
    simSeed: o.simSeed === undefined ? DEFAULT_FORM.simSeed : String(o.simSeed),
  };
}
