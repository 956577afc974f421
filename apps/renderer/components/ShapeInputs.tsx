// Shapes for a model's dynamic inputs. The fixed dimensions come from the model and are shown,
// not asked for; each symbolic dimension ("batch", "height") gets one row of min / opt / max. The
// form keeps whole trtexec-style shapes ("1x3x224x224"), so validation and the trtexec command
// see exactly what is built; an empty symbolic dimension is an empty part ("x3x224x224").
import { SeparatedName } from './SeparatedName.js';
import { useId } from 'react';
import type { ModelSummary, TensorInfo } from '../../shared/protocol.js';
import { dimOf, isFixed, shapeValueInputs, validateShapeRange, withDim, type FormState, type ShapeFields } from '../lib/options-form.js';

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
      const template = templateOf(other);
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
  return (
    <fieldset className="shapes">
      <legend>Shapes of dynamic inputs</legend>
      <p className="hint">Fixed dimensions come from the model; give min, opt and max for each symbolic one (a symbol several inputs share is filled in for all).</p>
      {dynamic.map((d) => {
        const input = model.inputs.find((i) => i.name === d.name);
        const f = form.shapes[d.name] ?? { min: '', opt: '', max: '' };
        return input ? (
          <DimTable key={d.name} input={input} f={f} putDim={(i, w, v) => putDim(d.name, i, w, v)} />
        ) : (
          <WholeShapes key={d.name} name={d.name} f={f} put={(nf) => put(d.name, nf)} />
        );
      })}
    </fieldset>
  );
}

function templateOf(input: TensorInfo): string {
  return input.shape.map((d) => (isFixed(d) ? String(d) : '')).join('x');
}

function DimTable({ input, f, putDim }: { input: TensorInfo; f: ShapeFields; putDim: (i: number, which: (typeof WHICH)[number], value: string) => void }) {
  const rank = input.shape.length;
  const symbolic = input.shape.map((d, i) => ({ d, i })).filter(({ d }) => !isFixed(d));
  const names = symbolic.map(({ d, i }) => (typeof d === 'string' && d !== '' && d !== '?' ? d : `dim ${i}`));
  const label = (k: number) => (names.indexOf(names[k]) !== k || names.lastIndexOf(names[k]) !== k ? `${names[k]} (dim ${symbolic[k].i})` : names[k]);
  const touched = symbolic.some(({ i }) => WHICH.some((w) => dimOf(f[w], rank, i) !== ''));
  const check = validateShapeRange(input.name, input, f);
  // Input names may hold spaces or colons ("input:0"): React's id is always a valid reference.
  const errorId = useId();
  return (
    <div className="shape-input">
      <div className="shape-head">
        <span className="tname">{input.name}</span> <span className="muted shape-decl">[{input.shape.join(', ')}]</span>
      </div>
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
                    aria-describedby={touched && !check.ok ? errorId : undefined}
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
      <p className="shape-preview" aria-label={`${input.name} shapes`}>
        {WHICH.map((w) => (
          <span key={w}>
            <span className="muted">{w}</span>{' '}
            {f[w]
              .split('x')
              .map((p) => (p.trim() === '' ? '?' : p.trim()))
              .join('x')}
          </span>
        ))}
      </p>
      {touched && !check.ok && (
        <p className="field-error" id={errorId}>
          {check.error}
        </p>
      )}
    </div>
  );
}

/** Without the input's declared shape (not in the model's inputs), whole shapes are typed. */
function WholeShapes({ name, f, put }: { name: string; f: ShapeFields; put: (f: ShapeFields) => void }) {
  return (
    <div className="value-row">
      <span className="tname">{name}</span>
      {WHICH.map((w) => (
        <input
          key={w}
          aria-label={`${name} ${w} shape`}
          placeholder={`${w}, e.g. 1x3x224x224`}
          value={f[w]}
          spellCheck={false}
          onChange={(e) => put({ ...f, [w]: e.target.value })}
        />
      ))}
    </div>
  );
}
