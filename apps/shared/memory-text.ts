// Memory in words, the same on every surface (CLI, UI, MCP, LSP, the farm): sizes as users type
// them ("20G", "512MiB"), the sentence a build stopped at its memory limit ends with, the one an
// out-of-memory kill ends with, and which TensorRT log lines mean an allocation failed.
import type { MemoryStop, OomKill } from './protocol.js';
import { formatPath } from './view-format.js';

import { formatMemory } from './memory-size.js';

export { formatMemory, parseMemorySize } from './memory-size.js';

function where(path: readonly string[] | undefined): string {
  return path && path.length > 0 ? `at ${formatPath(path)}` : 'before the first phase';
}

/** "stopped: host memory 21.5 GiB passed the 20 GiB limit during Building engine › … › Timing graph nodes". */
export function memoryStopMessage(stop: MemoryStop): string {
  const during = stop.phasePath.length > 0 ? `during ${formatPath(stop.phasePath)}` : 'before the first phase';
  return `stopped: ${stop.kind === 'host' ? 'host' : 'GPU'} memory ${formatMemory(stop.usedBytes)} passed the ${formatMemory(stop.limitBytes)} limit ${during}`;
}

/** "killed by the out-of-memory killer at Building engine › … › Timing graph nodes, peak 3.9 GiB of 4 GiB". */
export function oomKillMessage(oom: OomKill): string {
  const peak = oom.peakHostBytes !== undefined ? `, peak ${formatMemory(oom.peakHostBytes)}` : '';
  const of = oom.limitBytes !== undefined ? `${peak ? ' of' : ', limit'} ${formatMemory(oom.limitBytes)}` : peak ? ' (no memory limit on its cgroup)' : '';
  return `killed by the out-of-memory killer ${where(oom.phasePath)}${peak}${of}`;
}

/**
 * Log lines that mean an allocation failed, as TensorRT, CUDA and the C++ runtime word it
 * (TensorRT often goes on to report "Could not find any implementation for node ..." when every
 * tactic's allocation failed, which names no memory at all).
 */
const OOM_LINES: RegExp[] = [
  /out of memory/i,
  /OutOfMemory/,
  /\bOOM\b/,
  /CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation/,
  /std::bad_alloc/,
  /Requested amount of GPU memory \(\d+ bytes\) could not be allocated/i,
  /(failed|unable) to allocate/i,
  /could not allocate/i,
  /insufficient (device |host )?memory/i,
];

/** Whether a log line says memory ran out (or an allocation failed). */
export function isOutOfMemoryLine(message: string): boolean {
  return OOM_LINES.some((re) => re.test(message));
}

/** TensorRT's way of ending a build whose tactics all failed (often for want of memory). */
export function isNoImplementationError(message: string): boolean {
  return /Could not find any implementation for node/i.test(message);
}

/**
 * The error a failed build ends with, said plainly when its log showed an allocation failure:
 * "out of memory: <the allocation failure> (TensorRT then reported: <its error>)".
 */
export function plainOutOfMemoryError(error: string | undefined, oomLine: string | undefined): string | undefined {
  if (!oomLine) return error;
  if (error && isOutOfMemoryLine(error) && /^out of memory/i.test(error)) return error;
  const said = error && error !== oomLine ? ` (then: ${error})` : '';
  const lead = isNoImplementationError(error ?? '') ? 'out of memory: no tactic could be allocated' : 'out of memory';
  return `${lead}: ${oomLine}${said}`;
}
