// Shapes for a model's dynamic inputs. Each input gets one field that takes a shape as people
// write it ("1x3x640x640", or min:opt:max as trtexec's --minShapes/--optShapes/--maxShapes), and
// behind it ("per dimension") one row of min / opt / max per symbolic dimension ("batch",
// "height"); the fixed dimensions come from the model and are shown, not asked for. Both edit the
// form's whole trtexec-style shapes ("1x3x224x224"), so they always agree, and validation and the
// trtexec command see exactly what is built; an empty symbolic dimension is an empty part
// ("x3x224x224"), "?" in the field.
import { SeparatedName } from './SeparatedName.js';
import { useEffect, useId, useRef, useState } from 'react';
import type { ModelSummary, TensorInfo } from '../../shared/protocol.js';
import { dimOf, isFixed, shapeValueInputs, validateShapeRange, withDim, type FormState, type ShapeFields } from '../lib/options-form.js';
import { parseShapeText, shapePlaceholder, shapeTemplate, shapeText, shapesUntouched } from '../lib/shape-text.js';

const WHICH = ['min', 'opt', 'max'] as const;

export function ShapeInputs({ model, form, set }: { model: ModelSummary; form: FormState; set: (patch: Partial<FormState>) => void }) {
  const valued = shapeValueInputs(model).map((i) => i.name);
  const dynamic = model.dynamicInputs.filter((d) => !valued.includes(d.name));
  if (dynamic.length === 0) return null;
  const put = (name: string, f: ShapeFields) => set({ shapes: { ...form.shapes, [name]: f } });
  // A symbol shared by several inputs ("batch", "seq_len" on input_ids, attention_mask, ...) is
  // one size: a value typed for it fills the same symbol of the other inputs where that is still
  // empty or was equal to the old value, so it is typed once.
  const putDim = (name: string, i: number, which: (typeof WHICH)[number], value: string) => {
    const input = model.inputs.find((x) => x.name === name)!;
    const symbol = input.shape[i];
    const shapes = { ...form.shapes };
    const old = dimOf(shapes[name]?.[which] ?? '', input.shape.length, i);
    for (const d of dynamic) {
      const other = model.inputs.find((x) => x.name === d.name);
      if (!other) continue;
      const template = shapeTemplate(other);
      const f = shapes[d.name] ?? { min: template, opt: template, max: template };
      let text = f[which];
      other.shape.forEach((s, j) => {
        const self = d.name === name && j === i;
        const same = typeof symbol === 'string' && symbol !== '' && symbol !== '?' && s === symbol;
        if (self || (same && [old, ''].includes(dimOf(text, other.shape.length, j)))) text = withDim(text, template, other.shape.length, j, value);
      });
      if (text !== f[which]) shapes[d.name] = { ...f, [which]: text };
    }
    set({ shapes });
  };
  return <ShapesFieldset model={model} dynamic={dynamic} form={form} put={put} putDim={putDim} />;
}

function ShapesFieldset(props: {
  model: ModelSummary;
  dynamic: ModelSummary['dynamicInputs'];
  form: FormState;
  put: (name: string, f: ShapeFields) => void;
  putDim: (name: string, i: number, which: (typeof WHICH)[number], value: string) => void;
}) {
  const { model, dynamic, form, put, putDim } = props;
  const ref = useRef<HTMLFieldSetElement>(null);
  // In a short window the model's summary fills the left column: a model that needs shapes brings
  // them into view when it opens (not on every keystroke), so Build's prerequisite is on screen.
  useEffect(() => {
    ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [model]);
  return (
    <fieldset className="shapes" ref={ref}>
      <legend>Shapes of dynamic inputs</legend>
      <p className="hint">
        One shape, or min:opt:max (trtexec&apos;s <span className="nowrap">--minShapes</span>, <span className="nowrap">--optShapes</span>,{' '}
        <span className="nowrap">--maxShapes</span>). Empty: each dynamic dimension is built as 1, as trtexec does.
      </p>
      {dynamic.map((d) => {
        const input = model.inputs.find((i) => i.name === d.name);
        const f = form.shapes[d.name] ?? { min: '', opt: '', max: '' };
        return <ShapeInput key={d.name} name={d.name} input={input} f={f} put={(nf) => put(d.name, nf)} putDim={(i, w, v) => putDim(d.name, i, w, v)} />;
      })}
    </fieldset>
  );
}

/**
 * One input: the text field, its error, and the per-dimension boxes behind a disclosure. The text
 * typed is kept while it still describes the form's shapes (a half-typed "1x3x640x640:" is not
 * rewritten under the cursor); a change made in the boxes replaces it with the shapes' own text.
 */
function ShapeInput(props: {
  name: string;
  input: TensorInfo | undefined;
  f: ShapeFields;
  put: (f: ShapeFields) => void;
  putDim: (i: number, which: (typeof WHICH)[number], value: string) => void;
}) {
  const { name, input, f, put, putDim } = props;
  const template = shapeTemplate(input);
  const [draft, setDraft] = useState<{ text: string; basis: ShapeFields } | null>(null);
  const text = draft && sameFields(draft.basis, f) ? draft.text : shapeText(f, template);
  const check = validateShapeRange(name, input, f);
  const error = !shapesUntouched(f, template) && !check.ok ? check.error : undefined;
  const errorId = useId();
  const symbolic = input ? input.shape.filter((d) => !isFixed(d)).length : 0;
  return (
    <div className="shape-input">
      <label className="shape-field">
        <span className="shape-head">
          <SeparatedName name={name} className="tname" />
          {input && <span className="muted shape-decl"> [{input.shape.join(', ')}]</span>}
        </span>
        <input
          aria-label={`${name} shape`}
          title={`${name}: one shape (min = opt = max) or min:opt:max, dimensions joined by "x"`}
          placeholder={shapePlaceholder(template)}
          value={text}
          spellCheck={false}
          autoComplete="off"
          aria-describedby={error ? errorId : undefined}
          aria-invalid={error ? true : undefined}
          onChange={(e) => {
            const fields = parseShapeText(e.target.value, template);
            setDraft({ text: e.target.value, basis: fields });
            put(fields);
          }}
        />
      </label>
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
      {input && symbolic > 0 && (
        <details className="per-dim">
          <summary>per dimension</summary>
          <DimTable input={input} f={f} putDim={putDim} />
        </details>
      )}
    </div>
  );
}

function sameFields(a: ShapeFields, b: ShapeFields): boolean {
  return a.min === b.min && a.opt === b.opt && a.max === b.max;
}

function DimTable({ input, f, putDim }: { input: TensorInfo; f: ShapeFields; putDim: (i: number, which: (typeof WHICH)[number], value: string) => void }) {
  const rank = input.shape.length;
  const symbolic = input.shape.map((d, i) => ({ d, i })).filter(({ d }) => !isFixed(d));
  const names = symbolic.map(({ d, i }) => (typeof d === 'string' && d !== '' && d !== '?' ? d : `dim ${i}`));
  const label = (k: number) => (names.indexOf(names[k]) !== k || names.lastIndexOf(names[k]) !== k ? `${names[k]} (dim ${symbolic[k].i})` : names[k]);
  const touched = symbolic.some(({ i }) => WHICH.some((w) => dimOf(f[w], rank, i) !== ''));
  const check = validateShapeRange(input.name, input, f);
  return (
    <table className="dims">
      <thead>
        <tr>
          <th scope="col">dimension</th>
          {WHICH.map((w) => (
            <th key={w} scope="col">
              {w}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {symbolic.map(({ i }, k) => (
          <tr key={i}>
            <th scope="row" title={`${label(k)}: dimension ${i} of ${input.name}`}>
              <SeparatedName name={label(k)} />
            </th>
            {WHICH.map((w) => (
              <td key={w}>
                <input
                  inputMode="numeric"
                  aria-label={`${input.name} ${label(k)} ${w}`}
                  aria-invalid={touched && !check.ok && !/^\d+$/.test(dimOf(f[w], rank, i)) ? true : undefined}
                  value={dimOf(f[w], rank, i)}
                  spellCheck={false}
                  onChange={(e) => putDim(i, w, e.target.value)}
                />
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
