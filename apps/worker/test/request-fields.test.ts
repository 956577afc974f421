// The addon's list of request fields (native/src/core/request_fields.def, exported as
// requestFields) against the options table's native keys (checkRequestFields in addon.ts): the
// real addon's list passes, and each kind of difference fails the load with a message that names
// it, all of them at once. Runs the real addon (build/native, `npm run build:native`); no GPU.
import { describe, expect, it } from 'vitest';

import { BUILD_OPTIONS, type OptionEntry } from '../../shared/build-options.js';
import { addonPath, checkRequestFields, loadNative, type RequestField } from '../addon.js';

const fields = (require(addonPath()) as { requestFields: RequestField[] }).requestFields;
const edit = (key: string, change: Partial<RequestField>) => fields.map((f) => (f.key === key ? { ...f, ...change } : f));
const without = (key: string) => fields.filter((f) => f.key !== key);

describe('the addon lists the request fields it reads', () => {
  it('agrees with the options table, so the addon loads', () => {
    expect(() => checkRequestFields(fields)).not.toThrow();
    expect(() => loadNative()).not.toThrow();
  });

  it('lists every native key of the table as an option field, with its unit and the worker fields apart', () => {
    const byKey = new Map(fields.map((f) => [f.key, f]));
    for (const e of BUILD_OPTIONS) {
      const n = e.native;
      if ('none' in n) continue;
      for (const key of 'keys' in n ? n.keys : [n.key]) expect(byKey.get(key)?.origin, `${e.field} → ${key}`).toBe('option');
    }
    expect(byKey.get('workspaceBytes')).toMatchObject({ type: 'integer', cxx: 'int64_t', unit: 'bytes' });
    expect(byKey.get('simDurationMs')).toMatchObject({ type: 'number', unit: 'ms' });
    expect(byKey.get('maxAuxStreams')).toMatchObject({ type: 'integer', min: 0 });
    expect(byKey.get('maxAuxStreams')?.tensorrt).toEqual({});
    expect(byKey.get('buildRoute')).toMatchObject({ type: 'string', tensorrt: { since: '11.1' } });
    expect(byKey.get('precision')?.tensorrt).toEqual({ before: '11.0' });
    expect(byKey.get('simSeed')?.tensorrt).toBeNull();
    expect(byKey.get('heartbeatMs')).toMatchObject({ origin: 'worker', unit: 'ms' });
    expect(byKey.get('layers')).toMatchObject({ origin: 'worker', type: 'layers' });
  });
});

describe('a difference between the table and the addon fails the load, naming it', () => {
  it('an addon without the list (built before it)', () => {
    expect(() => checkRequestFields(undefined, BUILD_OPTIONS, 'old.node')).toThrow(/old\.node does not export requestFields: .*npm run build:native/);
  });

  it('a table key the addon does not read', () => {
    expect(() => checkRequestFields(without('maxAuxStreams'), BUILD_OPTIONS, 'x.node')).toThrow(
      /x\.node reads build options differently .*option maxAuxStreams sends "maxAuxStreams", which the addon does not read/,
    );
  });

  it('an option field no table entry sends', () => {
    const extra: RequestField = { key: 'maxTacticCount', type: 'integer', cxx: 'int32_t', unit: '', origin: 'option', tensorrt: {} };
    expect(() => checkRequestFields([...fields, extra])).toThrow(/the addon reads "maxTacticCount" as an option, but no entry of the options table sends it/);
    // The same field set by the worker itself is no table's business.
    expect(() => checkRequestFields([...fields, { ...extra, origin: 'worker' }])).not.toThrow();
  });

  it('a table key the addon lists as the worker’s', () => {
    expect(() => checkRequestFields(edit('device', { origin: 'worker' }))).toThrow(/option device sends "device", which the addon lists as set by the worker/);
  });

  it('a type the sample, converted as toNativeRequest converts it, does not have', () => {
    expect(() => checkRequestFields(edit('maxAuxStreams', { type: 'string', cxx: 'std::string' }))).toThrow(
      /"maxAuxStreams": the addon reads string \(std::string\), option maxAuxStreams sends \d+/,
    );
    // tf32 is a boolean in the table and an integer (-1/0/1) natively: its toNative makes it one.
    expect(() => checkRequestFields(edit('tf32', { type: 'boolean' }))).toThrow(/"tf32": the addon reads boolean \(int32_t\), option tf32 sends 0/);
    expect(() => checkRequestFields(edit('shapes', { type: 'string[]' }))).toThrow(/"shapes": the addon reads string\[\]/);
    expect(() => checkRequestFields(edit('simFault', { type: 'integer' }))).toThrow(/"simFault": the addon reads integer .*option simFault sends "hang"/);
  });

  it('a unit the table does not convert to', () => {
    expect(() => checkRequestFields(edit('workspaceBytes', { unit: 'ms' }))).toThrow(/"workspaceBytes": the addon reads ms, option workspaceMiB sends MiB times 1048576/);
    expect(() => checkRequestFields(edit('optLevel', { unit: 'bytes' }))).toThrow(/"optLevel": the addon reads bytes, option optLevel sends no unit times 1/);
  });

  it('a lower bound the table lets a value under', () => {
    expect(() => checkRequestFields(edit('maxAuxStreams', { min: 1 }))).toThrow(/"maxAuxStreams": the addon refuses values below 1, option maxAuxStreams allows 0/);
  });

  it('a table entry whose key the addon lacks, from the table side', () => {
    const table: OptionEntry[] = [...BUILD_OPTIONS, { ...BUILD_OPTIONS.find((e) => e.field === 'optLevel')!, field: 'newOption', native: { key: 'newOption' } }];
    expect(() => checkRequestFields(fields, table)).toThrow(/option newOption sends "newOption", which the addon does not read/);
  });

  it('every difference at once', () => {
    let message = '';
    try {
      checkRequestFields(edit('avgTiming', { type: 'boolean' }).filter((f) => f.key !== 'dlaCore'));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('"avgTiming": the addon reads boolean');
    expect(message).toContain('option dlaCore sends "dlaCore", which the addon does not read');
  });
});
