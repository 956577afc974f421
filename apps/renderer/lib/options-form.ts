// The options form's state and its translation into BuildOptions. Validation happens here, before
// Build is sent, so the user gets an error that names the field (and the input, for shapes)
// instead of a round trip to the service.
import type { BuildOptionsInput, ModelSummary, Precision, ShapeRange, TensorInfo } from '../../shared/protocol.js';

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

export type FormResult = { ok: true; options: BuildOptionsInput } | { ok: false; error: string };

export function formToOptions(form: FormState, model: ModelSummary | null, simulatorUsed: boolean): FormResult {
  const options: BuildOptionsInput = { backend: form.backend, optLevel: form.optLevel };
  if (!Number.isInteger(form.optLevel) || form.optLevel < 0 || form.optLevel > 5) {
    return { ok: false, error: 'Optimization level must be a whole number from 0 to 5.' };
  }
  if (form.workspaceMiB.trim() !== '') {
    const n = positiveInt(form.workspaceMiB);
    if (n === null) return { ok: false, error: `Workspace must be a positive whole number of MiB, not "${form.workspaceMiB}".` };
    options.workspaceMiB = n;
  }
  if (form.stronglyTyped) options.stronglyTyped = true;
  else if (form.precision.length > 0) options.precision = [...form.precision];
  if (form.timingCache.trim() !== '') options.timingCache = form.timingCache.trim();

  if (model) {
    const shapes: Record<string, ShapeRange> = {};
    for (const d of model.dynamicInputs) {
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
