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
