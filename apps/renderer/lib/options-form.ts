// The options form's state and its translation into BuildOptions. Validation happens here, before
// Build is sent, so the user gets an error that names the field (and the input, for shapes)
// instead of a round trip to the service.
import type { BackendInfo, BuildOptionsInput, ModelSummary, Precision, ShapeRange, ShapeValueRange, TensorInfo } from '../../shared/protocol.js';
import { chosenBackend, trtCapabilities, trtVersionOf, type TrtCapabilities } from '../../shared/trt-capabilities.js';

export const FORM_PRECISIONS = ['fp16', 'bf16', 'int8', 'fp8'] as const satisfies readonly Precision[];
export type FormPrecision = (typeof FORM_PRECISIONS)[number];

export interface ShapeFields {
  min: string;
  opt: string;
  max: string;
}

export interface FormState {
  backend: 'auto' | 'tensorrt' | 'simulated';
  optLevel: number;
  /** Text fields stay strings so a half-typed value is not lost or coerced. */
  workspaceMiB: string;
  stronglyTyped: boolean;
  precision: FormPrecision[];
  timingCache: string;
  shapes: Record<string, ShapeFields>;
  /** Values of shape-tensor inputs, by input name (absent: not typed yet). */
  shapeValues: Record<string, ShapeFields>;
  /** CUDA device index; empty = default (0). */
  device: string;
  /** TensorRT 11.1+ build route; empty = TensorRT's default route. */
  buildRoute: string;
  simDuration: string;
  simSeed: string;
  simFault: '' | 'fail' | 'crash' | 'hang';
  simFaultPhase: string;
}

export const DEFAULT_FORM: FormState = {
  backend: 'auto',
  optLevel: 3,
  workspaceMiB: '',
  stronglyTyped: false,
  precision: [],
  timingCache: '',
  shapes: {},
  shapeValues: {},
  device: '',
  buildRoute: '',
  simDuration: '',
  simSeed: '',
  simFault: '',
  simFaultPhase: '',
};

/** Shape fields for a newly opened model: fixed inputs need none; dynamic ones start empty. */
export function shapeFieldsFor(model: ModelSummary, previous: Record<string, ShapeFields>): Record<string, ShapeFields> {
  const out: Record<string, ShapeFields> = {};
  for (const d of model.dynamicInputs) out[d.name] = previous[d.name] ?? { min: '', opt: '', max: '' };
  return out;
}

/**
 * What the TensorRT version of the backend the form would build on offers (the service resolves
 * "auto" the same way); undefined while backends are unknown.
 */
export function formCapabilities(backend: FormState['backend'], backends: BackendInfo[]): TrtCapabilities | undefined {
  const version = trtVersionOf(chosenBackend(backend, backends));
  return version ? trtCapabilities(version) : undefined;
}

/** Inputs whose values (not dims) the form asks for: the model reader's shape-tensor inputs. */
export function shapeValueInputs(model: ModelSummary): TensorInfo[] {
  const names = model.shapeTensorInputs ?? [];
  return model.inputs.filter((i) => names.includes(i.name));
}

export type FormResult = { ok: true; options: BuildOptionsInput } | { ok: false; error: string };

/**
 * `caps`: the TensorRT version the build will use. Options it does not have are not sent (their
 * controls are hidden, so a value left over from another backend must not leak into the build).
 */
export function formToOptions(form: FormState, model: ModelSummary | null, simulatorUsed: boolean, caps?: TrtCapabilities): FormResult {
  const options: BuildOptionsInput = { backend: form.backend, optLevel: form.optLevel };
  if (!Number.isInteger(form.optLevel) || form.optLevel < 0 || form.optLevel > 5) {
    return { ok: false, error: 'Optimization level must be a whole number from 0 to 5.' };
  }
  if (form.workspaceMiB.trim() !== '') {
    const n = positiveInt(form.workspaceMiB);
    if (n === null) return { ok: false, error: `Workspace must be a positive whole number of MiB, not "${form.workspaceMiB}".` };
    options.workspaceMiB = n;
  }
  if (caps?.stronglyTypedImplied) {
    // Implied on TensorRT 11: nothing to send, and precision flags do not exist.
  } else if (form.stronglyTyped) options.stronglyTyped = true;
  else {
    const precision = form.precision.filter((p) => !caps || caps.precisions.includes(p));
    if (precision.length > 0) options.precision = precision;
  }
  if (form.device.trim() !== '') {
    const n = nonNegativeInt(form.device);
    if (n === null || n > 2 ** 31 - 1) return { ok: false, error: `Device must be a CUDA device index (a whole number ≥ 0), not "${form.device}".` };
    options.device = n;
  }
  if (form.buildRoute.trim() !== '' && (!caps || caps.buildRoutes)) options.buildRoute = form.buildRoute.trim();
  if (form.timingCache.trim() !== '') options.timingCache = form.timingCache.trim();

  if (model) {
    const shapes: Record<string, ShapeRange> = {};
    const valued = shapeValueInputs(model);
    const shapeValues: Record<string, ShapeValueRange> = {};
    for (const input of valued) {
      const r = validateShapeValues(input, form.shapeValues[input.name] ?? { min: '', opt: '', max: '' });
      if (!r.ok) return r;
      shapeValues[input.name] = r.range;
    }
    if (Object.keys(shapeValues).length > 0) options.shapeValues = shapeValues;
    for (const d of model.dynamicInputs) {
      // A shape tensor's values fix its length: no dims to ask for.
      if (valued.some((v) => v.name === d.name)) continue;
      const input = model.inputs.find((i) => i.name === d.name);
      const r = validateShapeRange(d.name, input, form.shapes[d.name] ?? { min: '', opt: '', max: '' });
      if (!r.ok) return r;
      shapes[d.name] = r.range;
    }
    if (Object.keys(shapes).length > 0) options.shapes = shapes;
  }

  if (simulatorUsed) {
    if (form.simDuration.trim() !== '') {
      const s = Number(form.simDuration);
      if (!Number.isFinite(s) || s <= 0 || s > 24 * 3600) {
        return { ok: false, error: `Simulated duration must be a number of seconds above 0 (up to 86400), not "${form.simDuration}".` };
      }
      options.simDuration = s;
    }
    if (form.simSeed.trim() !== '') {
      const n = nonNegativeInt(form.simSeed);
      if (n === null) return { ok: false, error: `Seed must be a whole number ≥ 0, not "${form.simSeed}".` };
      options.simSeed = n;
    }
    if (form.simFault !== '') {
      const phase = form.simFaultPhase.trim();
      options.simFault = phase ? `${form.simFault}@${phase}` : form.simFault;
    }
  }
  return { ok: true, options };
}

type RangeResult = { ok: true; range: ShapeRange } | { ok: false; error: string };

/** Checks one dynamic input's min/opt/max against the model: rank, fixed dims, min ≤ opt ≤ max. */
export function validateShapeRange(name: string, input: TensorInfo | undefined, f: ShapeFields): RangeResult {
  const rank = input?.shape.length;
  const parsed: Record<'min' | 'opt' | 'max', number[]> = { min: [], opt: [], max: [] };
  for (const which of ['min', 'opt', 'max'] as const) {
    const text = f[which].trim();
    if (text === '') return { ok: false, error: `Input "${name}": ${which} shape is empty (e.g. ${example(input)}).` };
    const dims = text.split(/\s*[x×,]\s*/).map((d) => (/^\d+$/.test(d) ? Number(d) : NaN));
    if (dims.some((d) => !Number.isSafeInteger(d) || d <= 0)) {
      return { ok: false, error: `Input "${name}": ${which} shape "${text}" must be positive whole numbers joined by "x".` };
    }
    if (rank !== undefined && dims.length !== rank) {
      return { ok: false, error: `Input "${name}": ${which} shape has ${dims.length} dimensions, the model declares ${rank}.` };
    }
    if (input) {
      for (let i = 0; i < dims.length; i++) {
        const declared = input.shape[i];
        if (typeof declared === 'number' && declared > 0 && dims[i] !== declared) {
          return { ok: false, error: `Input "${name}": ${which} dimension ${i} is ${dims[i]}, but the model fixes it at ${declared}.` };
        }
      }
    }
    parsed[which] = dims;
  }
  for (let i = 0; i < parsed.min.length; i++) {
    if (!(parsed.min[i] <= parsed.opt[i] && parsed.opt[i] <= parsed.max[i])) {
      return {
        ok: false,
        error: `Input "${name}": dimension ${i} must satisfy min ≤ opt ≤ max (got ${parsed.min[i]}, ${parsed.opt[i]}, ${parsed.max[i]}).`,
      };
    }
  }
  return { ok: true, range: parsed };
}

type ValuesResult = { ok: true; range: ShapeValueRange } | { ok: false; error: string };

/** One shape-tensor input's min/opt/max values: whole numbers (any sign), one per element, min ≤ opt ≤ max. */
export function validateShapeValues(input: TensorInfo, f: ShapeFields): ValuesResult {
  const name = input.name;
  const count = input.shape.length === 0 ? 1 : typeof input.shape[0] === 'number' ? input.shape[0] : undefined;
  const parsed: Record<'min' | 'opt' | 'max', number[]> = { min: [], opt: [], max: [] };
  for (const which of ['min', 'opt', 'max'] as const) {
    const text = f[which].trim();
    if (text === '') return { ok: false, error: `Shape tensor "${name}": ${which} values are empty (${count ?? 'one or more'} whole number${count === 1 ? '' : 's'} joined by "x").` };
    const values = text.split(/\s*[x×,]\s*/).map((d) => (/^-?\d+$/.test(d) ? Number(d) : NaN));
    if (values.some((d) => !Number.isSafeInteger(d))) {
      return { ok: false, error: `Shape tensor "${name}": ${which} values "${text}" must be whole numbers joined by "x".` };
    }
    if (count !== undefined && values.length !== count) {
      return { ok: false, error: `Shape tensor "${name}": ${which} has ${values.length} value${values.length === 1 ? '' : 's'}, the input holds ${count}.` };
    }
    parsed[which] = values;
  }
  if (parsed.min.length !== parsed.opt.length || parsed.opt.length !== parsed.max.length) {
    return { ok: false, error: `Shape tensor "${name}": min, opt and max need the same number of values.` };
  }
  for (let i = 0; i < parsed.min.length; i++) {
    if (!(parsed.min[i] <= parsed.opt[i] && parsed.opt[i] <= parsed.max[i])) {
      return { ok: false, error: `Shape tensor "${name}": value ${i} must satisfy min ≤ opt ≤ max (got ${parsed.min[i]}, ${parsed.opt[i]}, ${parsed.max[i]}).` };
    }
  }
  return { ok: true, range: parsed };
}

function example(input: TensorInfo | undefined): string {
  if (!input) return '1x3x224x224';
  return input.shape.map((d) => (typeof d === 'number' && d > 0 ? String(d) : '1')).join('x');
}

function positiveInt(s: string): number | null {
  const t = s.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

function nonNegativeInt(s: string): number | null {
  const t = s.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}
