// The value types build options are made of (shape ranges, precisions, simulator faults, the
// backend choice) and their text forms. A module of their own so that both the event protocol
// (protocol.ts) and the options table (build-options.ts) can use them without importing each
// other. Free of Node and DOM imports, like everything in apps/shared.
import { z } from 'zod';
import { parseMemoryLimit, parseMemorySize } from './memory-size.js';

export const BackendChoice = z.enum(['auto', 'tensorrt', 'simulated']);
export type BackendChoice = z.infer<typeof BackendChoice>;

export const ShapeRange = z.object({
  min: z.array(z.number().int().positive()),
  opt: z.array(z.number().int().positive()),
  max: z.array(z.number().int().positive()),
});
export type ShapeRange = z.infer<typeof ShapeRange>;

/** Shape-tensor values may be zero or negative (e.g. -1 in a Reshape target); dims may not. */
export const ShapeValueRange = z.object({
  min: z.array(z.number().int()),
  opt: z.array(z.number().int()),
  max: z.array(z.number().int()),
});
export type ShapeValueRange = z.infer<typeof ShapeValueRange>;

export const Precision = z.enum(['fp16', 'bf16', 'int8', 'fp8', 'int4', 'fp4']);
export type Precision = z.infer<typeof Precision>;

export const SimFaultKind = z.enum(['fail', 'crash', 'hang']);
export type SimFaultKind = z.infer<typeof SimFaultKind>;

/** `fail`, `crash`, `hang`, optionally `@<phase name>` (e.g. "hang@Timing graph nodes"). */
export const SimFault = z.string().regex(/^(fail|crash|hang)(@.+)?$/, 'expected fail|crash|hang[@<phase>]');

/** Parse one `name:AxBxC/AxBxC/AxBxC` spec (trtexec style; one shape means min=opt=max). */
export function parseShapeSpec(spec: string): [string, ShapeRange] {
  const colon = spec.lastIndexOf(':');
  if (colon <= 0) throw new Error(`invalid shape "${spec}": expected <input>:<min>/<opt>/<max>, e.g. x:1x3x224x224/4x3x224x224/8x3x224x224`);
  const name = spec.slice(0, colon);
  const parts = spec.slice(colon + 1).split('/');
  if (parts.length !== 1 && parts.length !== 3) {
    throw new Error(`invalid shape "${spec}": give one shape or three (min/opt/max) separated by "/"`);
  }
  const dims = parts.map((p) => {
    const ds = p.split('x').map((d) => (/^\d+$/.test(d) ? Number(d) : NaN));
    if (ds.length === 0 || ds.some((d) => !Number.isSafeInteger(d) || d <= 0)) {
      throw new Error(`invalid shape "${spec}": "${p}" is not a list of positive integers joined by "x"`);
    }
    return ds;
  });
  const [min, opt, max] = dims.length === 1 ? [dims[0], dims[0], dims[0]] : dims;
  return [name, { min, opt, max }];
}

export function formatShapeRange(name: string, r: ShapeRange): string {
  const f = (d: number[]) => d.join('x');
  return `${name}:${f(r.min)}/${f(r.opt)}/${f(r.max)}`;
}

/** Parse `fail|crash|hang[@phase]`. */
export function parseSimFault(s: string): { kind: SimFaultKind; phase?: string } {
  const at = s.indexOf('@');
  const kind = SimFaultKind.parse(at < 0 ? s : s.slice(0, at));
  return at < 0 ? { kind } : { kind, phase: s.slice(at + 1) };
}

/** Bytes; also accepts "20G", "512MiB" (memory-size.ts), which become bytes. */
export const MemorySize = z.preprocess((v, ctx) => {
  if (typeof v !== 'string') return v;
  try {
    return parseMemorySize(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
}, z.number().int().positive().max(Number.MAX_SAFE_INTEGER));

/** A memory limit: bytes (or "20G"), or "auto" (90 % of what the worker may use). */
export const MemoryLimit = z.preprocess(
  (v, ctx) => {
    if (typeof v !== 'string') return v;
    try {
      return parseMemoryLimit(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message });
      return z.NEVER;
    }
  },
  z.union([z.literal('auto'), z.number().int().positive().max(Number.MAX_SAFE_INTEGER)]),
);

// ───────────── trtexec's build specs (I/O formats, layer precisions, tactic sources, preview) ─────────────
// Kept as trtexec writes them (one string each): the native adapter parses the same text
// (native/src/trt/trt_options.cc), so what a copied command says is what the build gets. These
// checks run first on every surface, so a typo is a one-line error before a worker starts.

/** Data types trtexec's specs take (its stringToValue<DataType>). */
export const SPEC_TYPES = ['fp32', 'fp16', 'bf16', 'int8', 'fp8', 'int32', 'int64', 'bool', 'uint8', 'int4'] as const;
/** Tensor formats --inputIOFormats/--outputIOFormats take (trtexec's stringToValue<TensorFormat>). */
export const SPEC_FORMATS = ['chw', 'chw2', 'chw4', 'hwc8', 'chw16', 'chw32', 'dhwc8', 'cdhw32', 'hwc', 'dhwc', 'dla_linear', 'hwc16', 'dla_hwc4'] as const;
export const TACTIC_SOURCES = ['CUBLAS', 'CUBLAS_LT', 'CUBLASLT', 'CUDNN', 'EDGE_MASK_CONVOLUTIONS', 'JIT_CONVOLUTIONS'] as const;
/** Preview features by trtexec's names (profileSharing0806 is on by default since 10.0 and has no effect). */
export const PREVIEW_FEATURES = ['aliasedPluginIO1003', 'runtimeActivationResize', 'multiDeviceRuntime', 'profileSharing0806'] as const;

const isType = (t: string) => (SPEC_TYPES as readonly string[]).includes(t);

/** `fp16:chw,int8:chw4+hwc8` (one entry per network input or output, in order). */
export function ioFormatsProblem(spec: string): string | undefined {
  for (const entry of spec.split(',')) {
    const colon = entry.indexOf(':');
    if (colon < 0) return `"${entry}" is not <type>:<format>[+<format>], e.g. fp16:chw`;
    const type = entry.slice(0, colon);
    if (!isType(type)) return `"${type}" is not a type (${SPEC_TYPES.join(', ')})`;
    const bad = entry
      .slice(colon + 1)
      .split('+')
      .find((f) => !(SPEC_FORMATS as readonly string[]).includes(f));
    if (bad !== undefined) return `"${bad}" is not a format (${SPEC_FORMATS.join(', ')})`;
  }
  return undefined;
}

/** `conv1:fp16,*:fp32` (--layerPrecisions) or, with `several`, `conv1:fp16+fp32` (--layerOutputTypes, one type per output). */
export function layerTypesProblem(spec: string, several: boolean): string | undefined {
  for (const entry of spec.split(',')) {
    const colon = entry.lastIndexOf(':');
    if (colon <= 0) return `"${entry}" is not <layer name>:<type>, e.g. conv1:fp16 (* for every layer)`;
    const types = several ? entry.slice(colon + 1).split('+') : [entry.slice(colon + 1)];
    const bad = types.find((t) => !isType(t));
    if (bad !== undefined) return `"${bad}" is not a type (${SPEC_TYPES.join(', ')})`;
  }
  return undefined;
}

/** `-CUBLAS,+CUDNN` (either case), each source once. */
export function tacticSourcesProblem(spec: string): string | undefined {
  const seen = new Map<string, string>();
  for (const entry of spec.split(',')) {
    if (entry[0] !== '+' && entry[0] !== '-') return `"${entry}" must start with + or - (enable or disable)`;
    const name = entry.slice(1).toUpperCase();
    if (!(TACTIC_SOURCES as readonly string[]).includes(name))
      return `"${entry.slice(1)}" is not a tactic source (CUBLAS, CUBLAS_LT, CUDNN, EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS)`;
    const key = name === 'CUBLASLT' ? 'CUBLAS_LT' : name;
    if (seen.has(key) && seen.get(key) !== entry[0]) return `${key} is both enabled and disabled`;
    seen.set(key, entry[0]);
  }
  return undefined;
}

/** `+multiDeviceRuntime,-aliasedPluginIO1003`. */
export function previewProblem(spec: string): string | undefined {
  for (const entry of spec.split(',')) {
    if (entry[0] !== '+' && entry[0] !== '-') return `"${entry}" must start with + or - (enable or disable)`;
    if (!(PREVIEW_FEATURES as readonly string[]).includes(entry.slice(1))) return `"${entry.slice(1)}" is not a preview feature (${PREVIEW_FEATURES.join(', ')})`;
  }
  return undefined;
}

/** A string option checked by one of the above; the message names the option. */
export function specString(what: string, problem: (spec: string) => string | undefined) {
  return z
    .string()
    .min(1)
    .superRefine((s, ctx) => {
      const why = problem(s);
      if (why) ctx.addIssue({ code: 'custom', message: `${what}: ${why}` });
    });
}
