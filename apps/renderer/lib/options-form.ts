// The options form's state and its translation into BuildOptions. Validation happens here, before
// Build is sent, so the user gets an error that names the field (and the input, for shapes)
// instead of a round trip to the service.
import { BUILD_OPTIONS, readNumber, type GenericFormFields, type OptionEntry } from '../../shared/build-options.js';
import { type BackendInfo, type BuildOptionsInput, type ModelSummary, type Precision, type ShapeRange, type ShapeValueRange, type TensorInfo } from '../../shared/protocol.js';
import { backendCapabilities, chosenBackend, type TrtCapabilities } from '../../shared/trt-capabilities.js';
import { PLUGIN_OPTION_NAMES, type PluginLibraryLists, type PluginOption } from '../../shared/build-client.js';

/** Shown only where the TensorRT version has them (int4 from 10.1, fp4 from 10.8; none on 11). */
export const FORM_PRECISIONS = ['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4'] as const satisfies readonly Precision[];
export type FormPrecision = (typeof FORM_PRECISIONS)[number];

export interface ShapeFields {
  min: string;
  opt: string;
  max: string;
}

/**
 * The form: the table's generic controls (GenericFormFields: text fields stay strings so a
 * half-typed value is not lost or coerced; checkboxes are booleans; selects '' when not set),
 * and the controls OptionsForm draws by hand.
 */
export interface FormState extends GenericFormFields {
  backend: 'auto' | 'tensorrt' | 'simulated';
  optLevel: number;
  stronglyTyped: boolean;
  precision: FormPrecision[];
  timingCache: string;
  /** A pinned build's timing cache (read only, every tactic must be in it); not with timingCache. */
  pinnedCache: string;
  shapes: Record<string, ShapeFields>;
  /** Values of shape-tensor inputs, by input name (absent: not typed yet). */
  shapeValues: Record<string, ShapeFields>;
  /** TensorRT 11.1+ build route; empty = TensorRT's default route. */
  buildRoute: string;
  /** Plugin library paths, one per line (staticPlugins, dynamicPlugins, pluginsToSerialize). */
  staticPlugins: string;
  dynamicPlugins: string;
  pluginsToSerialize: string;
  /** Seconds after which the service cancels the build (reason "timeout"); empty = no budget. Not a build option. */
  timeBudget: string;
  simFault: '' | 'fail' | 'crash' | 'hang';
  simFaultPhase: string;
}

/** The table's options whose form control is generic (not 'custom'). */
export const GENERIC_FORM_OPTIONS = BUILD_OPTIONS.filter((e) => e.form && e.form.control !== 'custom');

export const DEFAULT_FORM: FormState = {
  ...(Object.fromEntries(GENERIC_FORM_OPTIONS.map((e) => [e.field, e.form!.initial])) as unknown as GenericFormFields),
  backend: 'auto',
  optLevel: 3,
  stronglyTyped: false,
  precision: [],
  timingCache: '',
  pinnedCache: '',
  shapes: {},
  shapeValues: {},
  buildRoute: '',
  staticPlugins: '',
  dynamicPlugins: '',
  pluginsToSerialize: '',
  timeBudget: '',
  simFault: '',
  simFaultPhase: '',
};

/**
 * Shape fields for a newly opened model: each dynamic input starts as its declared shape with the
 * fixed dimensions filled in and the symbolic ones left empty ("x3xx" for [batch, 3, h, w]), so
 * only the symbolic dimensions are left to type.
 */
export function shapeFieldsFor(model: ModelSummary): Record<string, ShapeFields> {
  const out: Record<string, ShapeFields> = {};
  const valued = shapeValueInputs(model).map((i) => i.name);
  for (const d of model.dynamicInputs) {
    if (valued.includes(d.name)) continue;
    const input = model.inputs.find((i) => i.name === d.name);
    if (!input) {
      out[d.name] = { min: '', opt: '', max: '' };
      continue;
    }
    const template = input.shape.map((dim) => (isFixed(dim) ? String(dim) : '')).join('x');
    out[d.name] = { min: template, opt: template, max: template };
  }
  return out;
}

/** A declared dimension TensorRT takes as given (the rest need min/opt/max). */
export function isFixed(dim: number | string): dim is number {
  return typeof dim === 'number' && dim > 0;
}

/** The form for a model opened for the first time: defaults, with its shapes pre-filled. */
export function formForModel(model: ModelSummary): FormState {
  return { ...DEFAULT_FORM, shapes: shapeFieldsFor(model) };
}

/** One dimension of a shape field ("x3xx" → dim 0 is ""), for per-dimension inputs. */
export function dimOf(text: string, rank: number, i: number): string {
  const parts = text.split('x');
  return parts.length === rank ? parts[i].trim() : '';
}

/** The shape field with one dimension replaced; a field of the wrong rank starts from `template`. */
export function withDim(text: string, template: string, rank: number, i: number, value: string): string {
  const parts = text.split('x');
  const base = parts.length === rank ? parts : template.split('x');
  return base.map((p, j) => (j === i ? value.replace(/x/g, '').trim() : p)).join('x');
}

/**
 * What the TensorRT version of the backend the form would build on offers (the service resolves
 * "auto" the same way); undefined while backends are unknown.
 */
export function formCapabilities(backend: FormState['backend'], backends: BackendInfo[]): TrtCapabilities | undefined {
  return backendCapabilities(chosenBackend(backend, backends));
}

/** Inputs whose values (not dims) the form asks for: the model reader's shape-tensor inputs. */
export function shapeValueInputs(model: ModelSummary): TensorInfo[] {
  const names = model.shapeTensorInputs ?? [];
  return model.inputs.filter((i) => names.includes(i.name));
}

/** `timeBudgetSeconds` is not a build option: the service's timer cancels the build after it. */
export type FormResult = { ok: true; options: BuildOptionsInput; timeBudgetSeconds?: number } | { ok: false; error: string };

/**
 * `caps`: the TensorRT version the build will use. Options it does not have are not sent (their
 * controls are hidden, so a value left over from another backend must not leak into the build).
 */
export function formToOptions(form: FormState, model: ModelSummary | null, simulatorUsed: boolean, caps?: TrtCapabilities): FormResult {
  const options: BuildOptionsInput = { backend: form.backend, optLevel: form.optLevel };
  if (!Number.isInteger(form.optLevel) || form.optLevel < 0 || form.optLevel > 5) {
    return { ok: false, error: 'Optimization level must be a whole number from 0 to 5.' };
  }
  if (caps?.stronglyTypedImplied) {
    // Implied on TensorRT 11: nothing to send, and precision flags do not exist.
  } else if (form.stronglyTyped) options.stronglyTyped = true;
  else {
    const precision = form.precision.filter((p) => !caps || caps.precisions.includes(p));
    if (precision.length > 0) options.precision = precision;
  }
  if (form.buildRoute.trim() !== '' && (!caps || caps.buildRoutes)) options.buildRoute = form.buildRoute.trim();
  for (const field of PLUGIN_OPTION_NAMES) {
    const paths = pluginPaths(form, field);
    if (paths.length) options[field] = paths;
  }
  if (form.timingCache.trim() !== '') {
    const p = form.timingCache.trim();
    // The service opens the file on its own machine, from its own working directory: a relative
    // path would silently land somewhere the user cannot see. Only absolute paths are sent.
    if (!isAbsolutePath(p)) {
      return {
        ok: false,
        error: `Timing cache file "${p}" is a relative path: give the full path on the machine that runs the builds (e.g. /home/me/caches/model.cache), since the build service resolves paths on its own machine.`,
      };
    }
    options.timingCache = p;
  }
  if (form.pinnedCache.trim() !== '') {
    const p = form.pinnedCache.trim();
    if (!isAbsolutePath(p)) {
      return {
        ok: false,
        error: `Pinned timing cache "${p}" is a relative path: give the full path on the machine that runs the builds, since the build service resolves paths on its own machine.`,
      };
    }
    if (options.timingCache) {
      return { ok: false, error: 'Give either a timing cache (read and updated) or a pinned timing cache (read only, every tactic must be in it), not both.' };
    }
    options.pinnedCache = p;
  }
  for (const entry of GENERIC_FORM_OPTIONS) {
    if (entry.form!.group === 'simulator' && !simulatorUsed) continue;
    const r = formValue(entry, (form as unknown as Record<string, unknown>)[entry.field], caps);
    if (typeof r === 'object') return r;
    if (r !== undefined) (options as Record<string, unknown>)[entry.field] = r;
  }

  if (model) {
    const shapes: Record<string, ShapeRange> = {};
    const valued = shapeValueInputs(model);
    const shapeValues: Record<string, ShapeValueRange> = {};
    const untouchedFields = (f: ShapeFields, template = '') => [f.min, f.opt, f.max].every((t) => t.trim() === '' || t === template);
    for (const input of valued) {
      const f = form.shapeValues[input.name] ?? { min: '', opt: '', max: '' };
      // Left empty: the service builds it as trtexec does (each value 1, with a warning).
      if (untouchedFields(f)) continue;
      const r = validateShapeValues(input, f);
      if (!r.ok) return r;
      shapeValues[input.name] = r.range;
    }
    if (Object.keys(shapeValues).length > 0) options.shapeValues = shapeValues;
    for (const d of model.dynamicInputs) {
      // A shape tensor's values fix its length: no dims to ask for.
      if (valued.some((v) => v.name === d.name)) continue;
      const input = model.inputs.find((i) => i.name === d.name);
      const f = form.shapes[d.name] ?? { min: '', opt: '', max: '' };
      // Untouched (empty, or the declared shape with its symbolic dimensions still blank): built as
      // trtexec builds it, each dynamic dimension 1, with a warning naming the shape used.
      if (untouchedFields(f, shapeFieldsFor(model)[d.name]?.min)) continue;
      const r = validateShapeRange(d.name, input, f);
      if (!r.ok) return r;
      shapes[d.name] = r.range;
    }
    if (Object.keys(shapes).length > 0) options.shapes = shapes;
  }

  let timeBudgetSeconds: number | undefined;
  if (form.timeBudget.trim() !== '') {
    const s = Number(form.timeBudget);
    if (!Number.isFinite(s) || s <= 0) return { ok: false, error: `Time budget must be a number of seconds above 0, not "${form.timeBudget}".` };
    timeBudgetSeconds = s;
  }

  if (simulatorUsed) {
    if (form.simFault !== '') {
      const phase = form.simFaultPhase.trim();
      options.simFault = phase ? `${form.simFault}@${phase}` : form.simFault;
    }
  }
  return { ok: true, options, ...(timeBudgetSeconds !== undefined ? { timeBudgetSeconds } : {}) };
}

/**
 * One generic control's value as the option it sets: undefined when not set (empty, or a checkbox
 * at its initial value), or an error naming the field.
 */
function formValue(entry: OptionEntry, value: unknown, caps: TrtCapabilities | undefined): string | number | boolean | undefined | { ok: false; error: string } {
  const f = entry.form!;
  if (f.control === 'checkbox') return value === f.initial && !f.alwaysSent ? undefined : (value as boolean);
  const text = String(value ?? '');
  if (text.trim() === '') return undefined;
  if (f.control === 'select') {
    if (caps && f.available && !f.available(caps).includes(text)) return { ok: false, error: `${f.name ?? f.label} "${text}" is not available on TensorRT ${caps.version}.` };
    return text;
  }
  if (f.control === 'text') {
    // trtexec-style specs ("fp16:chw", "-CUBLAS"): the table's schema says what is wrong.
    const r = entry.schema.safeParse(text.trim());
    return r.success ? text.trim() : { ok: false, error: `${f.name} ${f.invalid}: ${r.error.issues[0]?.message ?? 'invalid'}.` };
  }
  const n = readNumber(entry.range!, text);
  return n === null ? { ok: false, error: `${f.name} ${f.invalid}, not "${text}".` } : n;
}

type RangeResult = { ok: true; range: ShapeRange } | { ok: false; error: string };

/** Checks one dynamic input's min/opt/max against the model: rank, fixed dims, min ≤ opt ≤ max. */
export function validateShapeRange(name: string, input: TensorInfo | undefined, f: ShapeFields): RangeResult {
  const rank = input?.shape.length;
  const parsed: Record<'min' | 'opt' | 'max', number[]> = { min: [], opt: [], max: [] };
  for (const which of ['min', 'opt', 'max'] as const) {
    const text = f[which].trim();
    if (text === '') return { ok: false, error: `Input "${name}": ${which} shape is empty (e.g. ${example(input)}).` };
    // The shape field keeps text that is neither one shape nor three whole (shape-text.ts).
    const ranges = text.split(/\s*[:/]\s*/);
    if (ranges.length > 1) {
      return { ok: false, error: `Input "${name}": give one shape (e.g. ${example(input)}) or three as min:opt:max; "${text}" has ${ranges.length} parts.` };
    }
    const parts = text.split(/\s*[x×,]\s*/);
    const missing = parts.findIndex((d) => d === '');
    if (missing >= 0 && rank !== undefined && parts.length === rank) {
      const dim = input?.shape[missing];
      return { ok: false, error: `Input "${name}": ${which} of dimension ${missing}${typeof dim === 'string' && dim !== '' ? ` (${dim})` : ''} is empty.` };
    }
    const dims = parts.map((d) => (/^\d+$/.test(d) ? Number(d) : NaN));
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
    if (text === '')
      return { ok: false, error: `Shape tensor "${name}": ${which} values are empty (${count ?? 'one or more'} whole number${count === 1 ? '' : 's'} joined by "x").` };
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

/** The plugin libraries of one option, as the form holds them (one path per line). */
export function pluginPaths(form: Pick<FormState, PluginOption>, field: PluginOption): string[] {
  return form[field]
    .split('\n')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The desktop host's picks for a model as the form's fields (the host's lists replace the form's). */
export function pluginListsToForm(lists: PluginLibraryLists): Pick<FormState, PluginOption> {
  return { staticPlugins: lists.staticPlugins.join('\n'), dynamicPlugins: lists.dynamicPlugins.join('\n'), pluginsToSerialize: lists.pluginsToSerialize.join('\n') };
}

/** POSIX "/…", Windows "C:\\…" or "\\\\server\\…": the service's machine may be either. */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}
