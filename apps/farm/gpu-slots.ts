// `worker --gpus all|0,2,3|sim:N`: one farm worker process for a machine's GPUs, one slot per
// GPU, each slot taking one build at a time on its own device (a GPU should run one build at a
// time: concurrent builds distort each other's tactic timings).
import * as fs from 'node:fs';

export interface GpuSlot {
  /** CUDA device ordinal (after CUDA_VISIBLE_DEVICES) the slot's builds run on. */
  device: number;
  /** A stand-in GPU for the simulated backend (`sim:N`): no GPU is used. */
  simulated: boolean;
}

/** Where the NVIDIA kernel driver lists one folder per GPU it drives. */
export const NVIDIA_PROC_GPUS = '/proc/driver/nvidia/gpus';

/**
 * How many CUDA devices this process may use: CUDA_VISIBLE_DEVICES when it is set (its entries,
 * up to the first invalid one, as CUDA reads it), else the GPUs the NVIDIA driver lists. Counting
 * through the driver's /proc folder needs no CUDA call, so it also works before any library is
 * loaded; it does not see GPUs hidden by a container runtime that does not mount them (then
 * CUDA_VISIBLE_DEVICES or an explicit list is the way).
 */
export function countGpus(env: NodeJS.ProcessEnv = process.env, procDir = NVIDIA_PROC_GPUS): number {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined) {
    let n = 0;
    for (const entry of visible.split(',')) {
      const e = entry.trim();
      if (!/^(\d+|GPU-[0-9a-fA-F-]+|MIG-[\w/-]+)$/.test(e)) break;
      n++;
    }
    return n;
  }
  try {
    return fs.readdirSync(procDir).length;
  } catch {
    return 0;
  }
}

/** Parses --gpus; throws with a message for the usage line. */
export function parseGpus(spec: string, count: () => number = () => countGpus()): GpuSlot[] {
  const sim = /^sim:(\d+)$/.exec(spec);
  if (sim) {
    const n = Number(sim[1]);
    if (n < 1 || n > 64) throw new Error(`--gpus sim:N: N must be from 1 to 64, got ${n}`);
    return Array.from({ length: n }, (_, device) => ({ device, simulated: true }));
  }
  if (spec === 'all') {
    const n = count();
    if (n === 0)
      throw new Error('--gpus all: no GPU found (no NVIDIA driver GPUs in /proc, CUDA_VISIBLE_DEVICES empty); name them (--gpus 0,1) or use --gpus sim:N without TensorRT');
    return Array.from({ length: n }, (_, device) => ({ device, simulated: false }));
  }
  if (!/^\d+(,\d+)*$/.test(spec)) throw new Error(`--gpus: expected all, a list of device numbers (0,2,3) or sim:N, got "${spec}"`);
  const devices = spec.split(',').map(Number);
  if (new Set(devices).size !== devices.length) throw new Error(`--gpus: device listed twice in "${spec}"`);
  if (devices.some((d) => d > 63)) throw new Error(`--gpus: device numbers go up to 63, got "${spec}"`);
  return devices.map((device) => ({ device, simulated: false }));
}
