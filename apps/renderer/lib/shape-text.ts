// One dynamic input's shapes as people type them: "1x3x640x640" (min = opt = max) or
// "1x3x640x640:8x3x640x640:16x3x640x640" (min:opt:max, the values of trtexec's --minShapes,
// --optShapes and --maxShapes). "/" separates them as well, as in this project's --shapes
// (`parseShapeSpec` in apps/shared/option-values.ts). That parser takes a complete `name:…` spec
// and throws on anything unfinished; the field holds a half-typed shape while the user types, so it
// only splits the text into the form's three shapes here, and the form's own check
// (validateShapeRange) judges the numbers, naming the input and dimension. A dimension not given
// yet is "?" in the field and an empty part in the form ("?x3x?x?" ⇄ "x3xx"), so the field and
// the per-dimension boxes show the same state.
import type { TensorInfo } from '../../shared/protocol.js';
import { isFixed, type ShapeFields } from './options-form.js';

const WHICH = ['min', 'opt', 'max'] as const;

/** The declared shape with its fixed dimensions and "" for each symbolic one ("x3xx"). */
export function shapeTemplate(input: TensorInfo | undefined): string {
  return input ? input.shape.map((d) => (isFixed(d) ? String(d) : '')).join('x') : '';
}

/** Not typed yet: every shape empty or still the declared template (built as 1 per dynamic dimension). */
export function shapesUntouched(f: ShapeFields, template: string): boolean {
  return WHICH.every((w) => f[w].trim() === '' || f[w] === template);
}

/** The form's shapes as the field shows them: "" while untouched, one shape when all three agree. */
export function shapeText(f: ShapeFields, template: string): string {
  if (shapesUntouched(f, template)) return '';
  const one = (s: string) =>
    s
      .split('x')
      .map((p) => (p.trim() === '' ? '?' : p.trim()))
      .join('x');
  return f.min === f.opt && f.opt === f.max ? one(f.min) : WHICH.map((w) => one(f[w])).join(':');
}

/**
 * The field's text as the form's three shapes. An empty field is the declared template (untouched:
 * built as trtexec builds it). Text that is neither one shape nor three is kept whole in each of
 * them, so Build is refused with validateShapeRange's message about it (the one the field, the
 * Build button and the status line all show) instead of building something else.
 */
export function parseShapeText(text: string, template: string): ShapeFields {
  const t = text.trim();
  if (t === '') return { min: template, opt: template, max: template };
  const parts = t.split(SEPARATOR).map(fromField);
  if (parts.length === 1) return { min: parts[0], opt: parts[0], max: parts[0] };
  if (parts.length === 3) return { min: parts[0], opt: parts[1], max: parts[2] };
  return { min: t, opt: t, max: t };
}

/** Between min, opt and max: ":" as trtexec's three flags are read together, "/" as --shapes writes it. */
export const SEPARATOR = /\s*[:/]\s*/;

/** "?" (or "_") marks a dimension not given yet; "×" and "," are accepted as "x". */
function fromField(part: string): string {
  return part
    .split(/\s*[x×,]\s*/)
    .map((d) => (d === '?' || d === '_' ? '' : d))
    .join('x');
}

/** The shape an untouched field builds: each dynamic dimension 1, as trtexec does. */
export function builtAsOnes(template: string): string {
  return template
    .split('x')
    .map((d) => (d === '' ? '1' : d))
    .join('x');
}

/** The field's placeholder: the declared shape with "?" for what is asked, and what empty builds. */
export function shapePlaceholder(template: string): string {
  if (template === '') return 'e.g. 1x3x640x640, or min:opt:max';
  const asked = template
    .split('x')
    .map((d) => (d === '' ? '?' : d))
    .join('x');
  return `${asked} → built as ${builtAsOnes(template)} if left empty`;
}
