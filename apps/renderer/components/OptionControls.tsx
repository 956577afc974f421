// The options table's form controls of one group, in the table's order: text fields, checkboxes
// and selects are drawn from the table's `form` entries; a 'custom' control is drawn by the
// caller (OptionsForm), which passes one render function per such field.
import { cloneElement, Fragment, useId, type ReactElement, type ReactNode } from 'react';
import { BUILD_OPTIONS, type FormSpec, type OptionEntry } from '../../shared/build-options.js';
import type { TrtCapabilities } from '../../shared/trt-capabilities.js';
import type { FormState } from '../lib/options-form.js';

interface Props {
  group: FormSpec['group'];
  form: FormState;
  set: (patch: Partial<FormState>) => void;
  /** The TensorRT version builds would use: selects offer only the choices it has. */
  caps: TrtCapabilities | undefined;
  /** The controls of this group's 'custom' entries, by field. */
  custom?: Record<string, () => ReactNode>;
}

export function OptionControls({ group, form, set, caps, custom = {} }: Props) {
  return (
    <>
      {BUILD_OPTIONS.filter((e) => e.form?.group === group).map((entry) => {
        if (entry.form!.control === 'custom') {
          const draw = custom[entry.field];
          return draw ? <Fragment key={entry.field}>{draw()}</Fragment> : null;
        }
        return <TableControl key={entry.field} entry={entry} form={form} set={set} caps={caps} />;
      })}
    </>
  );
}

function TableControl({ entry, form, set, caps }: { entry: OptionEntry; form: FormState; set: Props['set']; caps: TrtCapabilities | undefined }) {
  const f = entry.form!;
  const value = (form as unknown as Record<string, unknown>)[entry.field];
  const setValue = (v: string | boolean) => set({ [entry.field]: v } as Partial<FormState>);
  switch (f.control) {
    case 'checkbox':
      return (
        <label className="check" title={f.title}>
          <input type="checkbox" checked={value as boolean} onChange={(e) => setValue(e.target.checked)} />
          {f.label}
        </label>
      );
    case 'select': {
      const offered = caps && f.available ? f.available(caps) : undefined;
      return (
        <Field label={f.label!}>
          <select value={value as string} onChange={(e) => setValue(e.target.value)}>
            <option value="">{f.unsetLabel ?? 'default'}</option>
            {(f.choices ?? [])
              .filter(([v]) => !offered || offered.includes(v))
              .map(([v, label]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
          </select>
        </Field>
      );
    }
    default:
      return (
        <Field label={f.label!}>
          <input
            inputMode={f.control === 'decimal' ? 'decimal' : f.control === 'text' ? 'text' : 'numeric'}
            placeholder={f.placeholder}
            title={f.title}
            value={value as string}
            onChange={(e) => setValue(e.target.value)}
          />
        </Field>
      );
  }
}

/**
 * A label bound to its control by id. Wrapping the control inside the label would make the
 * label's text include the control's options ("Optimization level 0 1 2 3 (default)…").
 */
export function Field({ label, children }: { label: string; children: ReactElement<{ id?: string }> }) {
  const id = useId();
  return (
    <div className="row">
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id })}
    </div>
  );
}
