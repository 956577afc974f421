// Shapes for a model's dynamic inputs. The fixed dimensions come from the model and are shown,
// not asked for; each symbolic dimension ("batch", "height") gets one row of min / opt / max. The
// form keeps whole trtexec-style shapes ("1x3x224x224"), so validation and the trtexec command
// see exactly what is built; an empty symbolic dimension is an empty part ("x3x224x224").
import type { ModelSummary, TensorInfo } from '../../shared/protocol.js';
import { dimOf, isFixed, shapeValueInputs, validateShapeRange, withDim, type FormState, type ShapeFields } from '../lib/options-form.js';

const WHICH = ['min', 'opt', 'max'] as const;

export function ShapeInputs({ model, form, set }: { model: ModelSummary; form: FormState; set: (patch: Partial<FormState>) => void }) {
  const valued = shapeValueInputs(model).map((i) => i.name);
  const dynamic = model.dynamicInputs.filter((d) => !valued.includes(d.name));
  if (dynamic.length === 0) return null;
  const put = (name: string, f: ShapeFields) => set({ shapes: { ...form.shapes, [name]: f } });
  return (
    <fieldset className="shapes">
      <legend>Shapes of dynamic inputs</legend>
      <p className="hint">Fixed dimensions come from the model; give min, opt and max for each symbolic one.</p>
      {dynamic.map((d) => {
        const input = model.inputs.find((i) => i.name === d.name);
        const f = form.shapes[d.name] ?? { min: '', opt: '', max: '' };
        return input ? (
          <DimTable key={d.name} input={input} f={f} put={(nf) => put(d.name, nf)} />
        ) : (
          <WholeShapes key={d.name} name={d.name} f={f} put={(nf) => put(d.name, nf)} />
        );
      })}
    </fieldset>
  );
}

function DimTable({ input, f, put }: { input: TensorInfo; f: ShapeFields; put: (f: ShapeFields) => void }) {
  const rank = input.shape.length;
  const template = input.shape.map((d) => (isFixed(d) ? String(d) : '')).join('x');
  const symbolic = input.shape.map((d, i) => ({ d, i })).filter(({ d }) => !isFixed(d));
  const names = symbolic.map(({ d, i }) => (typeof d === 'string' && d !== '' && d !== '?' ? d : `dim ${i}`));
  const label = (k: number) => (names.indexOf(names[k]) !== k || names.lastIndexOf(names[k]) !== k ? `${names[k]} (dim ${symbolic[k].i})` : names[k]);
  const touched = symbolic.some(({ i }) => WHICH.some((w) => dimOf(f[w], rank, i) !== ''));
  const check = validateShapeRange(input.name, input, f);
  const errorId = `shape-err-${input.name}`;
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
              <th scope="row" title={`dimension ${i} of ${input.name}`}>
                {label(k)}
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
                    onChange={(e) => put({ ...f, [w]: withDim(f[w], template, rank, i, e.target.value) })}
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
            <span className="muted">{w}</span> {f[w].split('x').map((p) => (p.trim() === '' ? '?' : p.trim())).join('x')}
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
        <input key={w} aria-label={`${name} ${w} shape`} placeholder={`${w}, e.g. 1x3x224x224`} value={f[w]} spellCheck={false} onChange={(e) => put({ ...f, [w]: e.target.value })} />
      ))}
    </div>
  );
}
