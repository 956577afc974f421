// The questions before a build: shapes for each dynamic input, backend, optimization level,
// output and timing-cache paths. Answers are remembered per model, so the next build of the same
// file offers "build with the last settings".
import * as path from 'node:path';
import * as vscode from 'vscode';

export interface ModelSummaryLike {
  inputs: Array<{ name: string; shape: Array<number | string | null> }>;
  dynamicInputs: Array<{ name: string; dims: string[] }>;
}

export interface ModelSettings {
  /** min/opt/max per dynamic input, this product's short form: "1x3x224x224/4x3x224x224/8x3x224x224". */
  shapes: Record<string, string>;
  backend: 'auto' | 'tensorrt' | 'simulated';
  optLevel: number;
  outputPath: string;
  /** Empty: no timing cache. */
  timingCache: string;
}

export interface BuildArgs {
  modelPath: string;
  outputPath: string;
  options: Record<string, unknown>;
}

const KEY_PREFIX = 'trtBuildStudio.model:';
export const settingsKey = (modelPath: string) => KEY_PREFIX + modelPath;

const DIMS = /^\d+(x\d+)*$/;

/** Checks one "min/opt/max" answer against the input's rank and fixed dimensions; a message or undefined. */
export function checkShapeAnswer(value: string, shape: ReadonlyArray<number | string | null>): string | undefined {
  const parts = value.trim().split('/');
  if (parts.length !== 3) return 'Write min/opt/max, e.g. 1x3x224x224/4x3x224x224/8x3x224x224';
  const dims = parts.map((p) => p.trim());
  for (const d of dims) if (!DIMS.test(d)) return `"${d}" is not a shape like 1x3x224x224`;
  const nums = dims.map((d) => d.split('x').map(Number));
  for (const [i, n] of nums.entries()) {
    if (n.length !== shape.length) return `${['min', 'opt', 'max'][i]} has ${n.length} dimensions, the input has ${shape.length}`;
  }
  for (let k = 0; k < shape.length; k++) {
    const fixed = shape[k];
    if (typeof fixed === 'number' && nums.some((n) => n[k] !== fixed)) return `dimension ${k} is fixed at ${fixed} in the model`;
    if (!(nums[0][k] <= nums[1][k] && nums[1][k] <= nums[2][k])) return `dimension ${k}: min <= opt <= max does not hold`;
  }
  return undefined;
}

/** A starting answer: fixed dims as they are, a batch of 1/4/8 and 224 for other symbolic dims. */
export function exampleShape(shape: ReadonlyArray<number | string | null>): string {
  const pick = (k: number) => shape.map((d, i) => (typeof d === 'number' ? d : i === 0 ? [1, 4, 8][k] : 224)).join('x');
  return `${pick(0)}/${pick(1)}/${pick(2)}`;
}

export function defaults(modelPath: string, backend: ModelSettings['backend']): ModelSettings {
  const stem = modelPath.replace(/\.onnx$/i, '');
  return { shapes: {}, backend, optLevel: 3, outputPath: `${stem}.engine`, timingCache: `${stem}.timing.cache` };
}

export function toBuildArgs(modelPath: string, s: ModelSettings, summary: ModelSummaryLike): BuildArgs {
  const dynamic = new Set(summary.dynamicInputs.map((d) => d.name));
  const shapes = Object.entries(s.shapes)
    .filter(([name]) => dynamic.has(name))
    .map(([name, v]) => `${name}:${v.trim()}`);
  const options: Record<string, unknown> = { backend: s.backend, optLevel: s.optLevel };
  if (shapes.length) options.shapes = shapes;
  if (s.timingCache.trim()) options.timingCache = s.timingCache.trim();
  return { modelPath, outputPath: s.outputPath, options };
}

/** True when every dynamic input has a valid remembered answer. */
export function complete(s: ModelSettings, summary: ModelSummaryLike): boolean {
  const shapeOf = new Map(summary.inputs.map((i) => [i.name, i.shape]));
  return summary.dynamicInputs.every((d) => s.shapes[d.name] !== undefined && checkShapeAnswer(s.shapes[d.name], shapeOf.get(d.name) ?? []) === undefined);
}

/**
 * Asks what is missing (or everything, when the user chooses to change the settings). Undefined
 * when the user dismissed a question: nothing is built and nothing is remembered.
 */
export interface BackendLike {
  name: string;
  available: boolean;
  version?: string;
  reason?: string;
}

/** What each backend choice means here, from the server's backend list when it could be had. */
export function backendDescription(choice: ModelSettings['backend'], backends: readonly BackendLike[] | undefined): string {
  const b = backends?.find((x) => x.name === choice);
  if (choice === 'auto') {
    const trt = backends?.find((x) => x.name === 'tensorrt');
    if (!trt) return 'TensorRT when available, else the simulator';
    return trt.available ? `TensorRT ${trt.version ?? ''} is available: builds use it`.replace('  ', ' ') : 'TensorRT is not available here: builds are simulated';
  }
  if (choice === 'simulated') return 'no GPU needed; writes a labelled stand-in file';
  if (!b) return 'real TensorRT 10';
  return b.available ? `TensorRT ${b.version ?? ''}`.trim() : `not available: ${b.reason ?? 'unknown reason'}`;
}

export async function askSettings(
  modelPath: string,
  summary: ModelSummaryLike,
  state: vscode.Memento,
  defaultBackend: ModelSettings['backend'],
  backends?: readonly BackendLike[],
): Promise<ModelSettings | undefined> {
  const remembered = state.get<ModelSettings>(settingsKey(modelPath));
  const base: ModelSettings = { ...defaults(modelPath, defaultBackend), ...remembered, shapes: { ...remembered?.shapes } };
  const name = path.basename(modelPath);
  if (remembered && complete(base, summary)) {
    const reuse = 'Build with the last settings';
    const pick = await vscode.window.showQuickPick(
      [
        { label: reuse, description: describe(base) },
        { label: 'Change settings…', description: 'shapes, backend, optimization level, paths' },
      ],
      { title: `TensorRT: build ${name}`, ignoreFocusOut: true },
    );
    if (!pick) return undefined;
    if (pick.label === reuse) return base;
  }

  const shapeOf = new Map(summary.inputs.map((i) => [i.name, i.shape]));
  for (const d of summary.dynamicInputs) {
    const shape = shapeOf.get(d.name) ?? [];
    const answer = await vscode.window.showInputBox({
      title: `Shapes for dynamic input "${d.name}" of ${name}`,
      prompt: `min/opt/max for [${shape.map((x) => x ?? '?').join(', ')}] (symbolic: ${d.dims.join(', ')}), as min/opt/max, e.g. 1x3x224x224/4x3x224x224/8x3x224x224`,
      value: base.shapes[d.name] ?? exampleShape(shape),
      ignoreFocusOut: true,
      validateInput: (v) => checkShapeAnswer(v, shape),
    });
    if (answer === undefined) return undefined;
    base.shapes[d.name] = answer.trim();
  }

  const choices: ModelSettings['backend'][] = ['auto', 'tensorrt', 'simulated'];
  const backendPick = await vscode.window.showQuickPick(
    choices
      .map((b) => ({
        label: b,
        description: backendDescription(b, backends),
        picked: b === base.backend,
      }))
      .sort((a, b) => Number(b.picked) - Number(a.picked)),
    { title: `Backend for ${name}`, ignoreFocusOut: true },
  );
  if (!backendPick) return undefined;
  base.backend = backendPick.label;

  const levels = [0, 1, 2, 3, 4, 5];
  const levelPick = await vscode.window.showQuickPick(
    levels
      .map((l) => ({ label: String(l), description: l === 3 ? 'TensorRT default' : l > 3 ? 'slower build, maybe faster engine' : 'faster build', picked: l === base.optLevel }))
      .sort((a, b) => Number(b.picked) - Number(a.picked)),
    { title: 'Builder optimization level', ignoreFocusOut: true },
  );
  if (!levelPick) return undefined;
  base.optLevel = Number(levelPick.label);

  const out = await vscode.window.showInputBox({
    title: 'Engine file',
    prompt: 'Where the engine is written (atomically: never a half-written file)',
    value: base.outputPath,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'An output path is needed'),
  });
  if (out === undefined) return undefined;
  base.outputPath = out.trim();

  const cache = await vscode.window.showInputBox({
    title: 'Timing cache file',
    prompt: 'Reused and updated by every build of this model (empty: no timing cache)',
    value: base.timingCache,
    ignoreFocusOut: true,
  });
  if (cache === undefined) return undefined;
  base.timingCache = cache.trim();
  return base;
}

export function describe(s: ModelSettings): string {
  const shapes = Object.entries(s.shapes).map(([n, v]) => `${n}:${v}`);
  return [`${s.backend}`, `opt level ${s.optLevel}`, ...shapes, s.timingCache ? 'timing cache' : 'no timing cache'].join(' · ');
}
