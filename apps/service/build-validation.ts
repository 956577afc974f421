// Everything checked before a build is queued, so that a build which cannot succeed fails in
// milliseconds with a message naming the problem, not after minutes in TensorRT.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  BuildOptions,
  describeZodError,
  type BackendInfo,
  type BackendName,
  type Dim,
  type LayerInfo,
  type ModelSummary,
  type ShapeRange,
} from '../shared/protocol.js';
import { ServiceError, type StartBuildInput } from './api.js';
import { readModel } from './model-reader.js';
import { checkTimingCacheFile } from './timing-cache-file.js';

export interface ValidatedBuild {
  modelPath: string;
  outputPath: string;
  options: BuildOptions;
  backend: BackendName;
  backendInfo: BackendInfo;
  summary: ModelSummary;
  layers: LayerInfo[];
  timeBudgetSeconds?: number;
}

const bad = (msg: string) => new ServiceError('bad_input', msg);
const fmtShape = (s: Dim[]) => `[${s.join(', ')}]`;

function checkPathString(p: unknown, what: string): string {
  if (typeof p !== 'string' || p.length === 0) throw bad(`${what} is required`);
  if (p.includes('\0')) throw bad(`${what} contains a NUL byte`);
  return path.resolve(p);
}

export function resolveBackend(choice: BuildOptions['backend'], backends: BackendInfo[]): BackendInfo {
  const find = (n: BackendName) => backends.find((b) => b.name === n);
  if (choice === 'auto') {
    const trt = find('tensorrt');
    if (trt?.available) return trt;
    const sim = find('simulated');
    if (sim?.available) return sim;
    throw bad(`no build backend is available: ${backends.map((b) => `${b.name}: ${b.reason ?? 'unavailable'}`).join('; ')}`);
  }
  const b = find(choice);
  if (!b?.available) throw bad(`the ${choice} backend is not available: ${b?.reason ?? 'not built into this addon'}`);
  return b;
}

/** A trtexec-style example for an input, e.g. `images:1x3x224x224/4x3x224x224/8x3x224x224`. */
function exampleSpec(name: string, shape: Dim[]): string {
  const pick = (k: 0 | 1 | 2) =>
    shape.map((d, i) => (typeof d === 'number' ? d : i === 0 ? [1, 4, 8][k] : 224)).join('x');
  return `${name}:${pick(0)}/${pick(1)}/${pick(2)}`;
}

export function checkShapes(summary: ModelSummary, shapes: Record<string, ShapeRange> | undefined): void {
  const problems: string[] = [];
  const inputs = new Map(summary.inputs.map((i) => [i.name, i]));
  for (const [name, r] of Object.entries(shapes ?? {})) {
    const input = inputs.get(name);
    if (!input) {
      problems.push(`shapes given for unknown input "${name}"; the model's inputs are: ${[...inputs.keys()].map((n) => `"${n}"`).join(', ') || '(none)'}`);
      continue;
    }
    const rank = input.shape.length;
    const wrong = (['min', 'opt', 'max'] as const).filter((k) => r[k].length !== rank);
    if (wrong.length) {
      problems.push(
        `shapes for "${name}" have the wrong rank: ${wrong.map((k) => `${k} ${r[k].join('x')} has ${r[k].length} dims`).join(', ')}, but the input has ${rank}: ${fmtShape(input.shape)}`,
      );
      continue;
    }
    input.shape.forEach((d, i) => {
      const [a, b, c] = [r.min[i], r.opt[i], r.max[i]];
      if (typeof d === 'number' && (a !== d || b !== d || c !== d)) {
        problems.push(`"${name}" dimension ${i} is fixed at ${d} in the model, but the shapes give ${a}/${b}/${c}`);
      } else if (!(a <= b && b <= c)) {
        problems.push(`"${name}" dimension ${i} (${d}): min ${a} <= opt ${b} <= max ${c} does not hold`);
      }
    });
  }
  const missing = summary.dynamicInputs.filter((d) => !shapes?.[d.name]);
  if (missing.length) {
    const list = missing.map((m) => `"${m.name}" ${fmtShape(inputs.get(m.name)?.shape ?? [])} (symbolic: ${m.dims.join(', ')})`);
    const examples = missing.map((m) => `--shapes ${exampleSpec(m.name, inputs.get(m.name)?.shape ?? [])}`);
    problems.push(
      `dynamic input${missing.length > 1 ? 's' : ''} without shapes: ${list.join('; ')}. ` +
        `Give min/opt/max dimensions the way trtexec writes them, e.g. ${examples.join(' ')}`,
    );
  }
  if (problems.length) throw bad(problems.join('\n'));
}

/** Proves the directory is writable by writing into it (access(2) lies for root and on read-only mounts). */
export function probeWritable(dir: string, what: string): void {
  const probe = path.join(dir, `.tbs-probe-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
  try {
    fs.writeFileSync(probe, '', { flag: 'wx' });
    fs.unlinkSync(probe);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(`${what} directory ${dir} is not writable (${code ?? (e as Error).message})`);
  }
}

export function checkParentDir(file: string, what: string): void {
  const dir = path.dirname(file);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw bad(`${what} directory does not exist: ${dir}`);
  }
  if (!st.isDirectory()) throw bad(`${what} directory is not a directory: ${dir}`);
  try {
    if (fs.statSync(file).isDirectory()) throw bad(`${what} path is a directory: ${file}`);
  } catch (e) {
    if (e instanceof ServiceError) throw e;
  }
}

export function checkOutputPath(outputPath: string, modelPath: string, summary: ModelSummary): void {
  checkParentDir(outputPath, 'output');
  const protectedFiles = [modelPath, ...summary.externalData.files.map((f) => path.join(path.dirname(modelPath), f))];
  if (protectedFiles.includes(outputPath)) throw bad(`output path ${outputPath} would overwrite the model`);
  probeWritable(path.dirname(outputPath), 'output');
}


export async function validateBuild(
  input: StartBuildInput,
  ctx: { id: string; outputDir: string; backends: () => Promise<BackendInfo[]> },
): Promise<ValidatedBuild> {
  const parsed = BuildOptions.safeParse(input.options ?? {});
  if (!parsed.success) throw bad(`invalid build options: ${describeZodError(parsed.error)}`);
  const options = parsed.data;
  const budget = input.timeBudgetSeconds;
  if (budget !== undefined && !(typeof budget === 'number' && Number.isFinite(budget) && budget > 0)) {
    throw bad(`timeBudgetSeconds must be a positive number of seconds, got ${String(budget)}`);
  }
  const modelPath = checkPathString(input.modelPath, 'modelPath');
  const { summary, layers } = await readModel(modelPath, { requireExternalData: true });
  checkShapes(summary, options.shapes);

  if (options.timingCache) {
    options.timingCache = checkPathString(options.timingCache, 'timingCache');
    if (options.timingCache === modelPath) throw bad(`the timing cache path ${modelPath} is the model itself`);
    checkTimingCacheFile(options.timingCache);
  }
  // An explicit output path is checked before asking for backends (which starts a worker).
  const explicitOutput = input.outputPath !== undefined ? checkPathString(input.outputPath, 'outputPath') : undefined;
  if (explicitOutput) checkOutputPath(explicitOutput, modelPath, summary);
  if (options.timingCache && options.timingCache === explicitOutput) {
    throw bad(`the timing cache and the engine cannot be the same file: ${explicitOutput}`);
  }
  const backendInfo = resolveBackend(options.backend, await ctx.backends());

  let outputPath: string;
  if (explicitOutput) {
    outputPath = explicitOutput;
  } else {
    fs.mkdirSync(ctx.outputDir, { recursive: true });
    const stem = path.basename(modelPath).replace(/\.onnx$/i, '');
    // The simulator's output is not an engine; its name should not suggest one can be deployed.
    const ext = backendInfo.name === 'simulated' ? '.simulated.engine' : '.engine';
    outputPath = path.join(ctx.outputDir, `${stem}-${ctx.id}${ext}`);
    checkOutputPath(outputPath, modelPath, summary);
  }

  return { modelPath, outputPath, options, backend: backendInfo.name, backendInfo, summary, layers, timeBudgetSeconds: budget };
}
