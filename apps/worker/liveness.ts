// What the worker adds to each heartbeat so a long silence can be read: its own CPU time and
// resident host memory, and the GPU's utilisation, this process's GPU memory, clock and
// temperature where NVML is present (sampled by the probe's own thread; a heartbeat reads the
// latest sample). Where NVML does not list this process (a container's PID namespace) its GPU
// memory is the device's growth since the first sample, labelled gpuMemorySource 'device-delta',
// with the reason in gpuMemoryUnknown. At the end it adds the memory peaks to build.finished. In TensorRT's silent stretches (tactic timing can go
// 100 s without a callback) a builder that burns CPU or keeps the GPU busy is working; one that
// does neither is stalled. Both are measured here, in the process the builder threads run in.
import { EventLine, type WireEvent } from '../shared/event-lines.js';
import type { BackendName, BuildEvent, BuildMemory } from '../shared/protocol.js';

type GpuMemorySource = 'process' | 'device-delta';
import type { GpuProbeOpen } from './native-api.js';

/** After this many failed samples in a row, stop asking NVML (and say why once). */
const MAX_FAILED_SAMPLES = 5;

export interface LivenessSources {
  /** Process CPU time, µs (process.cpuUsage). */
  cpuUsage(): { user: number; system: number };
  /** Opens the GPU probe; absent when the addon has none. */
  openGpuProbe?(device: number): GpuProbeOpen;
  /** Resident host memory of this process now, bytes (process.memoryUsage.rss: /proc on Linux). */
  rssBytes?(): number;
  /** The kernel's high-water mark of this process's resident memory, bytes (VmHWM), when known. */
  peakRssBytes?(): number | undefined;
}

type GpuFields = {
  gpuUtilPercent?: number;
  gpuUtilization?: number;
  gpuMemoryBytes?: number;
  gpuMemorySource?: GpuMemorySource;
  gpuMemoryUnknown?: string;
  gpuClockMhz?: number;
  gpuTemperatureC?: number;
  gpuNote?: string;
};

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
  private peakHost = 0;
  private peakGpu: number | null = null;
  /** 'device-delta' once any sample in the peak was the device's growth, not this process's own. */
  private peakGpuSource: GpuMemorySource | undefined;
  /** build.finished as annotated (the worker's result message carries the same object). */
  finished?: Extract<BuildEvent, { type: 'build.finished' }>;

  constructor(
    private readonly sources: LivenessSources,
    /** The CUDA device to watch, or undefined for no GPU figure. */
    private readonly device: number | undefined,
  ) {
    this.gpu = device === undefined ? { state: 'done' } : { state: 'unopened' };
  }

  /** `events` with each heartbeat annotated (a copy when there is one; the same array otherwise). */
  annotate(events: BuildEvent[]): BuildEvent[];
  /** The worker's wire form: hot events as text (EventLine) pass through untouched. */
  annotate(events: WireEvent[]): WireEvent[];
  annotate(events: WireEvent[]): WireEvent[] {
    let out = events;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (ev instanceof EventLine) continue;
      if (ev.type === 'build.finished') {
        const memory = this.memory();
        this.finished = memory ? { ...ev, memory } : ev;
        if (!memory) continue;
        if (out === events) out = events.slice();
        out[i] = this.finished;
        continue;
      }
      if (ev.type !== 'heartbeat') continue;
      if (out === events) out = events.slice();
      const { user, system } = this.sources.cpuUsage();
      const host = this.rss();
      const gpu = this.gpuFields();
      out[i] = { ...ev, workerCpuMs: (user + system) / 1000, ...(host !== undefined ? { hostMemoryBytes: host } : {}), ...gpu };
    }
    return out;
  }

  /**
   * build.finished's `memory` as the worker knows it: the peaks (the kernel's VmHWM for the host,
   * which also catches a peak between heartbeats). The per-phase rows are the build view's
   * (the service merges them in: memory-track.ts mergeMemory).
   */
  memory(): BuildMemory | undefined {
    const now = this.rss();
    if (now !== undefined && now > this.peakHost) this.peakHost = now;
    const hwm = safeNumber(() => this.sources.peakRssBytes?.());
    const peakHostBytes = Math.max(this.peakHost, hwm ?? 0);
    if (peakHostBytes === 0) return undefined;
    return { peakHostBytes, peakGpuBytes: this.peakGpu, ...(this.peakGpuSource ? { peakGpuSource: this.peakGpuSource } : {}), byPhase: [] };
  }

  private rss(): number | undefined {
    const n = safeNumber(() => this.sources.rssBytes?.());
    if (n === undefined) return undefined;
    if (n > this.peakHost) this.peakHost = n;
    return n;
  }

  /** Releases NVML (the build is over). */
  close(): void {
    if (this.gpu.state === 'open') this.gpu.probe.close();
    this.gpu = { state: 'done' };
  }

  private gpuFields(): GpuFields {
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
      const f: GpuFields = { gpuUtilPercent: s.gpuPercent, gpuUtilization: s.gpuPercent / 100 };
      const bytes = s.processMemoryBytes ?? (s.processMemoryUnknown !== undefined ? s.deviceUsedDeltaBytes : undefined);
      if (bytes !== undefined) {
        const source: GpuMemorySource = s.processMemoryBytes !== undefined ? 'process' : 'device-delta';
        f.gpuMemoryBytes = bytes;
        f.gpuMemorySource = source;
        this.peakGpu = Math.max(this.peakGpu ?? 0, bytes);
        if (this.peakGpuSource !== 'device-delta') this.peakGpuSource = source;
      }
      // On every heartbeat that lacks the process's own figure: a view keeps the latest heartbeat's.
      if (s.processMemoryBytes === undefined && s.processMemoryUnknown !== undefined) f.gpuMemoryUnknown = s.processMemoryUnknown;
      if (s.smClockMhz !== undefined) f.gpuClockMhz = s.smClockMhz;
      if (s.temperatureC !== undefined) f.gpuTemperatureC = s.temperatureC;
      return f;
    }
    this.gpu.failures += 1;
    if (s.permanent || this.gpu.failures >= MAX_FAILED_SAMPLES) {
      this.close();
      return { gpuNote: `no GPU utilisation: ${s.error}` };
    }
    return {};
  }
}

function safeNumber(read: () => number | undefined): number | undefined {
  try {
    const n = read();
    return n !== undefined && Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;
  } catch {
    return undefined;
  }
}

/** VmHWM of /proc/self/status in bytes; undefined off Linux or when unreadable. */
export function readPeakRss(readStatus: () => string): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readStatus());
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function safeOpen(open: (device: number) => GpuProbeOpen, device: number): GpuProbeOpen {
  try {
    return open(device);
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}
