// "Copy as trtexec command": the same build, reproducible outside the app with NVIDIA's own tool.
// Simulator-only options have no trtexec equivalent and are left out on purpose.
import type { BuildOptionsInput } from '../../shared/protocol.js';

export interface TrtexecInput {
  modelPath: string;
  /** Where trtexec should write the engine; defaults to the model path with ".engine". */
  enginePath?: string;
  options: BuildOptionsInput;
}

export function trtexecCommand({ modelPath, enginePath, options: o }: TrtexecInput): string {
  const args: string[] = ['trtexec', `--onnx=${modelPath}`, `--saveEngine=${enginePath ?? defaultEnginePath(modelPath)}`];
  if (o.optLevel !== undefined) args.push(`--builderOptimizationLevel=${o.optLevel}`);
  const pools: string[] = [];
  if (o.workspaceMiB !== undefined) pools.push(`workspace:${o.workspaceMiB}M`);
  // tacticDramMiB has no trtexec pool name (trtexec knows workspace, dlaSRAM, dlaLocalDRAM,
  // dlaGlobalDRAM, tacticSharedMem), so it is not emitted.
  if (o.tacticSharedMemoryKiB !== undefined) pools.push(`tacticSharedMem:${o.tacticSharedMemoryKiB}K`);
  if (pools.length > 0) args.push(`--memPoolSize=${pools.join(',')}`);
  const shapes = shapeEntries(o.shapes);
  if (shapes.length > 0) {
    for (const which of ['min', 'opt', 'max'] as const) {
      const flag = { min: '--minShapes', opt: '--optShapes', max: '--maxShapes' }[which];
      args.push(`${flag}=${shapes.map(([name, r]) => `${name}:${r[which].join('x')}`).join(',')}`);
    }
  }
  if (o.timingCache) args.push(`--timingCacheFile=${o.timingCache}`);
  if (o.stronglyTyped) args.push('--stronglyTyped');
  else for (const p of o.precision ?? []) args.push(`--${p}`);
  if (o.tf32 === false) args.push('--noTF32');
  if (o.profilingVerbosity) {
    args.push(`--profilingVerbosity=${o.profilingVerbosity}`);
  }
  if (o.hardwareCompatibility && o.hardwareCompatibility !== 'none') {
    args.push(`--hardwareCompatibilityLevel=${o.hardwareCompatibility === 'ampere_plus' ? 'ampere+' : 'sameComputeCapability'}`);
  }
  if (o.maxAuxStreams !== undefined) args.push(`--maxAuxStreams=${o.maxAuxStreams}`);
  return args.map(shellQuote).join(' ');
}

export function defaultEnginePath(modelPath: string): string {
  return /\.onnx$/i.test(modelPath) ? modelPath.replace(/\.onnx$/i, '.engine') : `${modelPath}.engine`;
}

type Range = { min: number[]; opt: number[]; max: number[] };

function shapeEntries(shapes: BuildOptionsInput['shapes']): [string, Range][] {
  if (!shapes) return [];
  if (Array.isArray(shapes)) return []; // trtexec-style strings are only accepted on input; the form never produces them
  return Object.entries(shapes as Record<string, Range>);
}

/** POSIX shell quoting: bare when safe, else single quotes (with ' written as '\''). */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
