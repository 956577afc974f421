// The heartbeat annotator with scripted sources: when it opens the GPU probe, how it reports a
// missing or failing one, and that it lets go of NVML.
import { describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { gpuProbeWanted, LivenessAnnotator, readPeakRss } from '../liveness.js';
import type { GpuProbeOpen, GpuSample } from '../native-api.js';

const beat = (seq: number): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq * 1000, type: 'heartbeat', sinceLastCallbackMs: 0, cancelRequested: false });
const step = (seq: number): BuildEvent => ({ v: 1, buildId: 'b', seq, t: seq * 1000, type: 'phase.step', id: 1, stepsDone: 1 }) as BuildEvent;

function scripted(samples: GpuSample[]) {
  const log = { opened: [] as number[], closed: 0 };
  let cpu = 0;
  const sources = {
    cpuUsage: () => ({ user: (cpu += 1000), system: 500 }),
    openGpuProbe: (device: number): GpuProbeOpen => {
      log.opened.push(device);
      return { ok: true, busId: '0000:5e:00.0', sample: () => samples.shift() ?? { error: 'script ran out', permanent: true }, close: () => void log.closed++ };
    },
  };
  return { sources, log };
}

const gpuOf = (events: BuildEvent[]) => events.map((e) => (e.type === 'heartbeat' ? [e.gpuUtilPercent, e.gpuNote] : 'other'));

describe('LivenessAnnotator', () => {
  it('adds CPU time to heartbeats only, leaving other events and the input alone', () => {
    const { sources } = scripted([]);
    const a = new LivenessAnnotator(sources, undefined);
    const input = [step(1), beat(2), step(3)];
    const out = a.annotate(input);
    expect(out).not.toBe(input);
    expect(input[1]).not.toHaveProperty('workerCpuMs');
    expect(out[0]).toBe(input[0]);
    expect(out[1]).toMatchObject({ workerCpuMs: 1.5 });
    const noBeat = [step(4)];
    expect(a.annotate(noBeat)).toBe(noBeat);
  });

  it('opens the probe at the first heartbeat, on the build device, and closes it at the end', () => {
    const { sources, log } = scripted([
      { gpuPercent: 87, memoryPercent: 3 },
      { gpuPercent: 12, memoryPercent: 1 },
    ]);
    const a = new LivenessAnnotator(sources, 1);
    a.annotate([step(1)]);
    expect(log.opened).toEqual([]);
    expect(gpuOf(a.annotate([beat(2), beat(3)]))).toEqual([
      [87, undefined],
      [12, undefined],
    ]);
    expect(log.opened).toEqual([1]);
    a.close();
    expect(log.closed).toBe(1);
    expect(gpuOf(a.annotate([beat(4)]))).toEqual([[undefined, undefined]]);
  });

  it('rides out a few failed samples, then says why once and stops asking', () => {
    const fail: GpuSample = { error: 'NVML gave no utilisation: Timeout (NVML error 10)', permanent: false };
    const { sources, log } = scripted([fail, { gpuPercent: 50, memoryPercent: 0 }, fail, fail, fail, fail, fail, { gpuPercent: 99, memoryPercent: 0 }]);
    const a = new LivenessAnnotator(sources, 0);
    const out = a.annotate([1, 2, 3, 4, 5, 6, 7, 8, 9].map(beat));
    expect(gpuOf(out)).toEqual([
      [undefined, undefined],
      [50, undefined],
      [undefined, undefined],
      [undefined, undefined],
      [undefined, undefined],
      [undefined, undefined],
      [undefined, 'no GPU utilisation: NVML gave no utilisation: Timeout (NVML error 10)'],
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(log.closed).toBe(1);
  });

  it('reports a probe that cannot open, or throws, or does not exist, once', () => {
    const cannot = new LivenessAnnotator({ cpuUsage: () => ({ user: 0, system: 0 }), openGpuProbe: () => ({ ok: false, reason: 'NVML was not found' }) }, 0);
    expect(gpuOf(cannot.annotate([beat(1), beat(2)]))).toEqual([
      [undefined, 'no GPU utilisation: NVML was not found'],
      [undefined, undefined],
    ]);
    const throws = new LivenessAnnotator(
      {
        cpuUsage: () => ({ user: 0, system: 0 }),
        openGpuProbe: () => {
          throw new TypeError('openGpuProbe(device): device must be a number');
        },
      },
      0,
    );
    expect(gpuOf(throws.annotate([beat(1)]))).toEqual([[undefined, 'no GPU utilisation: openGpuProbe(device): device must be a number']]);
    const old = new LivenessAnnotator({ cpuUsage: () => ({ user: 0, system: 0 }) }, 0);
    expect(gpuOf(old.annotate([beat(1)]))).toEqual([[undefined, 'no GPU utilisation: this build of the native addon has no GPU probe']]);
  });

  it('watches the GPU of TensorRT builds; TBS_GPU_PROBE turns it off, or on for any backend', () => {
    expect(gpuProbeWanted('tensorrt', {})).toBe(true);
    expect(gpuProbeWanted('simulated', {})).toBe(false);
    expect(gpuProbeWanted('tensorrt', { TBS_GPU_PROBE: 'off' })).toBe(false);
    expect(gpuProbeWanted('simulated', { TBS_GPU_PROBE: 'always' })).toBe(true);
  });

  it('adds host memory, and this process’s GPU memory, clock and temperature where NVML has them', () => {
    const { sources } = scripted([
      { gpuPercent: 94, memoryPercent: 3, processMemoryBytes: 31 * 2 ** 30, smClockMhz: 1980, temperatureC: 71 },
      { gpuPercent: 10, memoryPercent: 1 }, // no per-process figure: the field is left out
    ]);
    let rss = 100;
    const a = new LivenessAnnotator({ ...sources, rssBytes: () => (rss += 50) }, 0);
    const [b1, b2] = a.annotate([beat(1), beat(2)]);
    expect(b1).toMatchObject({ hostMemoryBytes: 150, gpuUtilPercent: 94, gpuUtilization: 0.94, gpuMemoryBytes: 31 * 2 ** 30, gpuClockMhz: 1980, gpuTemperatureC: 71 });
    expect(b2).toMatchObject({ hostMemoryBytes: 200, gpuUtilization: 0.1 });
    expect(b2).not.toHaveProperty('gpuMemoryBytes');
  });

  it('labels the GPU memory: the process’s own, or the device delta with the reason where NVML does not list the process', () => {
    const why = 'NVML does not list this process, and this process runs in a PID namespace of its own (a container: pid:[4026532259])';
    const { sources } = scripted([
      { gpuPercent: 50, memoryPercent: 0, processMemoryUnknown: why, deviceUsedDeltaBytes: 0 },
      { gpuPercent: 60, memoryPercent: 0, processMemoryUnknown: why, deviceUsedDeltaBytes: 5 * 2 ** 30 },
      { gpuPercent: 70, memoryPercent: 0, processMemoryBytes: 2 * 2 ** 30, deviceUsedDeltaBytes: 6 * 2 ** 30 },
      { gpuPercent: 70, memoryPercent: 0, processMemoryUnknown: 'the driver withholds per-process GPU memory' },
    ]);
    const a = new LivenessAnnotator({ ...sources, rssBytes: () => 100 }, 0);
    const [b1, b2, b3, b4] = a.annotate([beat(1), beat(2), beat(3), beat(4)]);
    expect(b1).toMatchObject({ gpuMemoryBytes: 0, gpuMemorySource: 'device-delta', gpuMemoryUnknown: why });
    expect(b2).toMatchObject({ gpuMemoryBytes: 5 * 2 ** 30, gpuMemorySource: 'device-delta', gpuMemoryUnknown: why });
    // The process's own figure wins over the delta whenever NVML gives it.
    expect(b3).toMatchObject({ gpuMemoryBytes: 2 * 2 ** 30, gpuMemorySource: 'process' });
    expect(b3).not.toHaveProperty('gpuMemoryUnknown');
    // Unknown with no delta: no figure, only the reason (never 0).
    expect(b4).not.toHaveProperty('gpuMemoryBytes');
    expect(b4).toMatchObject({ gpuMemoryUnknown: 'the driver withholds per-process GPU memory' });
    const finished: BuildEvent = { v: 1, buildId: 'b', seq: 9, t: 9000, type: 'build.finished', status: 'succeeded', durationMs: 9000 };
    expect(a.annotate([finished])[0]).toMatchObject({ memory: { peakGpuBytes: 5 * 2 ** 30, peakGpuSource: 'device-delta' } });
    // A build whose figures were all its own says so.
    const own = new LivenessAnnotator({ ...scripted([{ gpuPercent: 1, memoryPercent: 0, processMemoryBytes: 9 }]).sources, rssBytes: () => 100 }, 0);
    own.annotate([beat(1)]);
    expect(own.annotate([finished])[0]).toMatchObject({ memory: { peakGpuBytes: 9, peakGpuSource: 'process' } });
  });

  it('puts the peaks on build.finished: the larger of the samples and the kernel’s high-water mark', () => {
    const finished: BuildEvent = { v: 1, buildId: 'b', seq: 9, t: 9000, type: 'build.finished', status: 'succeeded', durationMs: 9000 };
    const { sources } = scripted([{ gpuPercent: 50, memoryPercent: 0, processMemoryBytes: 4000 }]);
    const samples = [700, 300];
    const a = new LivenessAnnotator({ ...sources, rssBytes: () => samples.shift() ?? 200, peakRssBytes: () => 650 }, 0);
    a.annotate([beat(1), beat(2)]);
    const [f] = a.annotate([finished]);
    expect(f).toMatchObject({ memory: { peakHostBytes: 700, peakGpuBytes: 4000, byPhase: [] } });
    const b = new LivenessAnnotator({ cpuUsage: () => ({ user: 0, system: 0 }), rssBytes: () => 10, peakRssBytes: () => 5000 }, undefined);
    expect(b.annotate([finished])[0]).toMatchObject({ memory: { peakHostBytes: 5000, peakGpuBytes: null } });
    // Nothing measured (no sources): build.finished is passed on as it is.
    const c = new LivenessAnnotator({ cpuUsage: () => ({ user: 0, system: 0 }) }, undefined);
    const same = [finished];
    expect(c.annotate(same)).toBe(same);
  });

  it('reads VmHWM from /proc/self/status, and nothing from anything else', () => {
    expect(readPeakRss(() => 'Name:\tnode\nVmPeak:\t 999 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n')).toBe(123456 * 1024);
    expect(readPeakRss(() => 'Name:\tnode\n')).toBeUndefined();
    expect(
      readPeakRss(() => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});
