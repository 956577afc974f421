// How much host memory a build will need, said before it starts (issue 21 item 5), and whether
// that is more than the worker may use. Three bases, best first:
//   1. earlier builds of the same model, options and backend (the time estimate's profile store,
//      build-profiles.ts): the largest peak they reached;
//   2. the simulator's simMemory, plus the worker's own memory: exact by construction;
//   3. a rule of thumb from the model: TensorRT holds the weights several times over while it
//      builds (the parsed network, its optimised copy, the engine being serialised) plus the
//      largest input tensors; WEIGHT_FACTOR and BUILDER_BASE_BYTES are that rule, NOT measured
//      against real TensorRT here (no GPU on the development machines): treat it as an order of
//      magnitude, which is what the warning needs.
import type { BuildProfile } from '../shared/build-estimate.js';
import { formatMemory } from '../shared/memory-size.js';
import type { BuildOptions, MemoryEstimate, ModelSummary, TensorInfo } from '../shared/protocol.js';

/** Copies of the weights a TensorRT build holds at its peak (rule of thumb, see above). */
export const WEIGHT_FACTOR = 3;
/** The builder, CUDA's host-side state and the worker process itself (rule of thumb). */
export const BUILDER_BASE_BYTES = 1024 * 2 ** 20;
/** The worker process without a build's memory (Node, the addon): set above what it measured (docs/benchmarks.md). */
export const WORKER_BASE_BYTES = 160 * 2 ** 20;

const ELEM_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, int64: 8, int32: 4, int8: 1, uint8: 1, bool: 1, float64: 8, int16: 2, uint16: 2 };

/** Bytes of the inputs at their largest shapes (max of the profile, else the declared fixed dims). */
function inputBytes(inputs: readonly TensorInfo[], options: BuildOptions): number {
  let total = 0;
  for (const t of inputs) {
    const dims = options.shapes?.[t.name]?.max ?? t.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    total += dims.reduce((a, d) => a * d, 1) * (ELEM_BYTES[t.elemType] ?? 4);
  }
  return total;
}

export function estimateHostMemory(input: {
  backend: 'tensorrt' | 'simulated';
  options: BuildOptions;
  model?: ModelSummary;
  profiles: readonly BuildProfile[];
  /** What the worker may use now (cgroup limit or MemAvailable, the lower); undefined when unknown. */
  availableBytes?: number;
}): MemoryEstimate | undefined {
  const measured = input.profiles.map((p) => p.peakHostBytes).filter((b): b is number => b !== undefined && b > 0);
  let est: { peakHostBytes: number; basis: string } | undefined;
  if (measured.length > 0) {
    est = {
      peakHostBytes: Math.max(...measured),
      basis: `the peak of ${measured.length} earlier build${measured.length === 1 ? '' : 's'} of this model with these options`,
    };
  } else if (input.backend === 'simulated') {
    const sim = input.options.simMemory ?? 0;
    est = {
      peakHostBytes: sim + WORKER_BASE_BYTES,
      basis: sim > 0 ? `the simulator's simMemory (${formatMemory(sim)}) plus the worker` : 'the worker alone (the simulator holds no build memory)',
    };
  } else if (input.model) {
    const weights = input.model.initializerBytes;
    const inputs = inputBytes(input.model.inputs, input.options);
    est = {
      peakHostBytes: Math.round(WEIGHT_FACTOR * weights + inputs + BUILDER_BASE_BYTES),
      basis: `a rule of thumb: ${WEIGHT_FACTOR} × the weights (${formatMemory(weights)})${inputs > 0 ? ` + the largest inputs (${formatMemory(inputs)})` : ''} + ${formatMemory(BUILDER_BASE_BYTES)} for the builder; no earlier build to go by`,
    };
  }
  if (!est) return undefined;
  const out: MemoryEstimate = { ...est };
  if (input.availableBytes !== undefined) {
    out.availableBytes = input.availableBytes;
    if (est.peakHostBytes > input.availableBytes) {
      out.warning = `this build may need about ${formatMemory(est.peakHostBytes)} of host memory, more than the ${formatMemory(input.availableBytes)} available: it may be killed by the out-of-memory killer (set maxHostMemory to stop it cleanly instead)`;
    }
  }
  return out;
}
