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

export interface ParsedShapeText {
  /** The form's shapes for the text (always set, so Build sees what the field shows). */
  fields: ShapeFields;
  /** Why the text is not one shape or three; the numbers are judged by validateShapeRange. */
  error?: string;
}

/**
 * The field's text as the form's three shapes. An empty field is the declared template (untouched:
 * built as trtexec builds it). Two parts, or four, are kept as typed (the missing max stays empty)
 * so Build is refused with the form's own message instead of building something else.
 */
export function parseShapeText(text: string, template: string): ParsedShapeText {
  const t = text.trim();
  if (t === '') return { fields: { min: template, opt: template, max: template } };
  const parts = t.split(/\s*[:/]\s*/).map(fromField);
  if (parts.length === 1) return { fields: { min: parts[0], opt: parts[0], max: parts[0] } };
  const fields = { min: parts[0], opt: parts[1], max: parts.slice(2).join(':') };
  if (parts.length === 3) return { fields };
  return {
    fields,
    error: `give one shape (e.g. ${example(template)}) or three as min:opt:max; "${t}" has ${parts.length} parts`,
  };
}

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

function example(template: string): string {
  return template ? builtAsOnes(template) : '1x3x640x640';
}
