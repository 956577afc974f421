// The options table (apps/shared/build-options.ts) against every surface it feeds. Each entry's
// `sample` goes through the protocol schema, the CLI's `build` flags, trtexec (written by "Copy as
// trtexec command" and read back by `trt-build-studio trtexec`), the options form, the MCP tool's
// argument parser, and the native addon: toNativeRequest → the addon's own request parser
// (request_from_js.cc) → echoBuildRequest → back into the option. An entry a surface forgets, or
// a native key the addon does not read, fails here by the entry's name.
//
// The native part runs the real addon (build/native, `npm run build:native`); it needs no GPU or
// TensorRT, since echoBuildRequest only parses the request.
import { describe, expect, it } from 'vitest';
import { parseBuildArgs } from '../../apps/cli/build-args.js';
import { parseBuildOptions } from '../../apps/surface/schemas.js';
import { DEFAULT_FORM, formToOptions, type FormState } from '../../apps/renderer/lib/options-form.js';
import { BUILD_OPTIONS, BuildOptions, type OptionEntry } from '../../apps/shared/build-options.js';
import { parseTrtexecArgs, trtexecArgs, trtexecWarnings } from '../../apps/shared/trtexec.js';
import { loadNative, toNativeRequest } from '../../apps/worker/addon.js';
import type { NativeBuildRequest } from '../../apps/worker/native-api.js';

/** Build flags for the entries the CLI reads by hand ('custom'): every such entry must be here. */
const CUSTOM_CLI_ARGS: Record<string, string[]> = {
  shapes: ['--shapes', 'x:1x3x8x8/2x3x16x16/4x3x32x32'],
  shapeValues: ['--minShapes', 'n:1x-1', '--optShapes', 'n:2x-1', '--maxShapes', 'n:4x0'],
  precision: ['--fp16', '--int8'],
};

/** The `build` argv that gives an entry its sample. */
function cliArgs(e: OptionEntry): string[] {
  const cli = e.cli!;
  if (cli.value === 'custom') {
    const args = CUSTOM_CLI_ARGS[e.field];
    if (!args) throw new Error(`${e.field}: a 'custom' CLI entry needs its flags in CUSTOM_CLI_ARGS`);
    return args;
  }
  if (cli.value === 'on' || cli.value === 'off') return [`--${cli.flag}`];
  return [`--${cli.flag}`, String(e.sample)];
}

/** The trtexec argv that gives an entry its sample, for entries a copied command leaves out. */
function trtexecReadArgs(e: OptionEntry): string[] {
  const t = e.trtexec!;
  if ('pool' in t) return [`--memPoolSize=${t.pool}:${String(e.sample)}${t.unit === 'MiB' ? 'M' : 'K'}`];
  return [`${t.flag}=${String(e.sample)}`];
}

const field = (e: OptionEntry) => e.field as keyof BuildOptions;

describe('the options table', () => {
  it('has one entry per field, each with a sample the protocol accepts as it is', () => {
    const fields = BUILD_OPTIONS.map((e) => e.field);
    expect(new Set(fields).size).toBe(fields.length);
    expect(Object.keys(BuildOptions.shape)).toEqual(fields);
    for (const e of BUILD_OPTIONS) expect(BuildOptions.parse({ [e.field]: e.sample })[field(e)], e.field).toEqual(e.sample);
  });

  it.each(BUILD_OPTIONS.filter((e) => e.cli).map((e) => [e.field, e] as const))('%s: the build command reads it from its flag', (_, e) => {
    const { input } = parseBuildArgs(['m.onnx', '-o', 'm.engine', ...cliArgs(e)]);
    expect(input.options?.[field(e)]).toEqual(e.sample);
  });

  it('every entry has a build flag', () => {
    expect(BUILD_OPTIONS.filter((e) => !e.cli).map((e) => e.field)).toEqual([]);
  });

  it.each(BUILD_OPTIONS.map((e) => [e.field, e] as const))('%s: a copied trtexec command says it (and reads back), or says why not', (_, e) => {
    const options = { [e.field]: e.sample };
    const t = e.trtexec;
    const written = t && !('flag' in t && t.emit === false) && !('pool' in t && t.emit === false);
    if (written) {
      const args = trtexecArgs({ modelPath: 'm.onnx', options });
      expect(parseTrtexecArgs(args).options[field(e)]).toEqual(e.sample);
      expect(trtexecWarnings({ modelPath: 'm.onnx', options })).toEqual([]);
      return;
    }
    if (t) expect(parseTrtexecArgs(['--onnx=m.onnx', ...trtexecReadArgs(e)]).options[field(e)]).toEqual(e.sample);
    if (e.trtexecMissing) {
      expect(trtexecWarnings({ modelPath: 'm.onnx', options })).toEqual([e.trtexecMissing(e.sample as never, options)]);
    } else {
      // Only this product's own choices (the backend; reuse and the engine store, which never reach
      // the builder: 'none' native) and the simulator's options need no word: trtexec builds for real.
      expect(e.field === 'backend' || e.form?.group === 'simulator' || 'none' in e.native, `${e.field} has no trtexec flag and no trtexecMissing`).toBe(true);
    }
    expect(trtexecArgs({ modelPath: 'm.onnx', options })).toEqual(trtexecArgs({ modelPath: 'm.onnx', options: {} }));
  });

  it.each(BUILD_OPTIONS.filter((e) => e.form && e.form.control !== 'custom').map((e) => [e.field, e] as const))(
    '%s: the options form sends what its control holds, and refuses a bad value naming the field',
    (_, e) => {
      const control = e.form!.control;
      const value = control === 'checkbox' || control === 'select' ? e.sample : String(e.sample);
      const form = { ...DEFAULT_FORM, [e.field]: value } as FormState;
      const r = formToOptions(form, null, true);
      expect(r.ok && r.options[field(e)]).toEqual(e.sample);
      // The form starts unset (or at the value TensorRT uses anyway), so a new form sends nothing for it.
      const fresh = formToOptions(DEFAULT_FORM, null, true);
      // (Except a toggle on by default, which says so: reuse.)
      if (e.field !== 'simSeed' && !e.form?.alwaysSent) expect(fresh.ok && fresh.options[field(e)]).toBeUndefined();
      if (e.form?.alwaysSent) expect(fresh.ok && fresh.options[field(e)]).toBe(e.form.initial);
      if (control === 'number' || control === 'decimal') {
        const bad = formToOptions({ ...DEFAULT_FORM, [e.field]: 'x' } as FormState, null, true);
        expect(bad).toEqual({ ok: false, error: `${e.form!.name} ${e.form!.invalid}, not "x".` });
      }
    },
  );

  it.each(BUILD_OPTIONS.map((e) => [e.field, e] as const))('%s: the MCP/LSP build tool takes it', (_, e) => {
    expect(parseBuildOptions({ [e.field]: e.sample })[field(e)]).toEqual(e.sample);
  });
});

describe('the options table through the native addon (JS → native → JS)', () => {
  const native = loadNative();
  const request = (options: Record<string, unknown>): NativeBuildRequest => ({
    buildId: 'echo',
    backend: 'simulated',
    modelPath: '/m.onnx',
    outputPath: '/m.engine',
    options: BuildOptions.parse({ backend: 'simulated', ...options }),
    layers: [],
  });

  it('the addon has the echo this test needs', () => {
    expect(typeof native.echoBuildRequest, 'rebuild the addon: npm run build:native').toBe('function');
  });

  it.each(BUILD_OPTIONS.map((e) => [e.field, e] as const))('%s: the native request parser reads what toNativeRequest sends, and it maps back', (_, e) => {
    const n = e.native;
    if ('none' in n) {
      // Not a native key: the reason is written in the table (the backend choice is resolved by the service).
      expect(n.none.length).toBeGreaterThan(10);
      return;
    }
    const sent = toNativeRequest(request({ [e.field]: e.sample }));
    const echoed = native.echoBuildRequest!(sent);
    const keys = 'keys' in n ? n.keys : [n.key];
    for (const key of keys) {
      expect(sent[key], `toNativeRequest sets ${key}`).toBeDefined();
      expect(echoed[key], `the addon reads ${key}`).toEqual(sent[key]);
    }
    let back: unknown;
    if ('keys' in n) back = n.fromNative(echoed);
    else if (n.fromNative) back = n.fromNative(echoed[n.key] as never);
    else back = n.scale !== undefined ? (echoed[n.key] as number) / n.scale : echoed[n.key];
    expect(back).toEqual(e.sample);
  });

  it('an option left out reaches the addon as "not set"', () => {
    const echoed = native.echoBuildRequest!(toNativeRequest(request({})));
    expect(echoed).toMatchObject({ maxAuxStreams: -1, tacticDramBytes: -1, workspaceBytes: -1, device: -1, tf32: -1, buildRoute: '', stronglyTyped: false });
  });
});
