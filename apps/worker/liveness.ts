// What the worker adds to each heartbeat so a long silence can be read: its own CPU time, and the
// GPU's utilisation where NVML is present. In TensorRT's silent stretches (tactic timing can go
// 100 s without a callback) a builder that burns CPU or keeps the GPU busy is working; one that
// does neither is stalled. Both are measured here, in the process the builder threads run in.
import type { BackendName, BuildEvent } from '../shared/protocol.js';
import type { GpuProbeOpen } from './native-api.js';

/** After this many failed samples in a row, stop asking NVML (and say why once). */
const MAX_FAILED_SAMPLES = 5;

export interface LivenessSources {
  /** Process CPU time, µs (process.cpuUsage). */
  cpuUsage(): { user: number; system: number };
  /** Opens the GPU probe; absent when the addon has none. */
  openGpuProbe?(device: number): GpuProbeOpen;
}

/**
 * Whether a build's heartbeats carry the GPU figure. TensorRT builds do (it is their GPU); a
 * simulated build uses no GPU, so a figure beside it would mislead. TBS_GPU_PROBE=off turns it
 * off, =always turns it on for any backend (the tests run it against fake NVML this way).
 */
export function gpuProbeWanted(backend: BackendName, env: NodeJS.ProcessEnv = process.env): boolean {
  const mode = env.TBS_GPU_PROBE;
  if (mode === 'off') return false;
  if (mode === 'always') return true;
  return backend === 'tensorrt';
}

type Gpu = { state: 'unopened' } | { state: 'open'; probe: Extract<GpuProbeOpen, { ok: true }>; failures: number } | { state: 'done' };

export class LivenessAnnotator {
  private gpu: Gpu;

  constructor(
    private readonly sources: LivenessSources,
    /** The CUDA device to watch, or undefined for no GPU figure. */
    private readonly device: number | undefined,
  ) {
    this.gpu = device === undefined ? { state: 'done' } : { state: 'unopened' };
  }

  /** `events` with each heartbeat annotated (a copy when there is one; the same array otherwise). */
  annotate(events: BuildEvent[]): BuildEvent[] {
    let out = events;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (ev.type !== 'heartbeat') continue;
      if (out === events) out = events.slice();
      const { user, system } = this.sources.cpuUsage();
      out[i] = { ...ev, workerCpuMs: (user + system) / 1000, ...this.gpuFields() };
    }
    return out;
  }

  /** Releases NVML (the build is over). */
  close(): void {
    if (this.gpu.state === 'open') this.gpu.probe.close();
    this.gpu = { state: 'done' };
  }

  private gpuFields(): { gpuUtilPercent?: number; gpuNote?: string } {
    if (this.gpu.state === 'unopened') {
      // Opened at the first heartbeat, not at start: the build has chosen its device by then.
      const opened = this.sources.openGpuProbe
        ? safeOpen(this.sources.openGpuProbe, this.device ?? 0)
        : ({ ok: false, reason: 'this build of the native addon has no GPU probe' } as const);
      if (!opened.ok) {
        this.gpu = { state: 'done' };
        return { gpuNote: `no GPU utilisation: ${opened.reason}` };
      }
      this.gpu = { state: 'open', probe: opened, failures: 0 };
    }
    if (this.gpu.state !== 'open') return {};
    const s = this.gpu.probe.sample();
    if ('gpuPercent' in s) {
      this.gpu.failures = 0;
      return { gpuUtilPercent: s.gpuPercent };
    }
    this.gpu.failures += 1;
    if (s.permanent || this.gpu.failures >= MAX_FAILED_SAMPLES) {
      this.close();
      return { gpuNote: `no GPU utilisation: ${s.error}` };
    }
    return {};
  }
}

function safeOpen(open: (device: number) => GpuProbeOpen, device: number): GpuProbeOpen {
  try {
    return open(device);
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}
