// Memory in words (memory-text.ts, memory-size.ts): sizes as typed, the stop and OOM sentences
// every surface shows, and which log lines mean an allocation failed.
import { describe, expect, it } from 'vitest';
import { parseMemoryLimit } from '../memory-size.js';
import { formatMemory, isOutOfMemoryLine, memoryStopMessage, oomKillMessage, parseMemorySize, plainOutOfMemoryError } from '../memory-text.js';
import { BuildOptions } from '../protocol.js';

const GiB = 2 ** 30;

describe('memory sizes', () => {
  it('reads binary units with or without i and B, and plain bytes', () => {
    expect(parseMemorySize('20G')).toBe(20 * GiB);
    expect(parseMemorySize('20 GiB')).toBe(20 * GiB);
    expect(parseMemorySize('20gb')).toBe(20 * GiB);
    expect(parseMemorySize('1.5T')).toBe(1.5 * 1024 * GiB);
    expect(parseMemorySize('512M')).toBe(512 * 2 ** 20);
    expect(parseMemorySize('4096')).toBe(4096);
    expect(parseMemoryLimit('auto')).toBe('auto');
    expect(parseMemoryLimit('AUTO ')).toBe('auto');
  });

  it('refuses what is not a size, saying what one looks like', () => {
    for (const bad of ['', 'lots', '-1G', '0', '20X', '1e3', 'G', '20 ib', '99999999P']) {
      expect(() => parseMemorySize(bad), bad).toThrow(/invalid memory size .*e\.g\. 512M, 20G/);
    }
  });

  it('is what the build options take: strings become bytes, "auto" only for the host limit', () => {
    expect(BuildOptions.parse({ simMemory: '2G', maxHostMemory: 'auto', maxGpuMemory: 1024 })).toMatchObject({ simMemory: 2 * GiB, maxHostMemory: 'auto', maxGpuMemory: 1024 });
    expect(BuildOptions.parse({ maxHostMemory: '20G' }).maxHostMemory).toBe(20 * GiB);
    expect(BuildOptions.safeParse({ maxGpuMemory: 'auto' }).success).toBe(false);
    const r = BuildOptions.safeParse({ simMemory: 'much' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toMatch(/invalid memory size "much"/);
  });

  it('formats without trailing zeros', () => {
    expect(formatMemory(20 * GiB)).toBe('20 GiB');
    expect(formatMemory(21.5 * GiB)).toBe('21.5 GiB');
    expect(formatMemory(1.25 * GiB)).toBe('1.25 GiB');
    expect(formatMemory(1.5 * GiB)).toBe('1.5 GiB');
    expect(formatMemory(300 * 2 ** 20)).toBe('300 MiB');
  });
});

describe('memory sentences', () => {
  it('names the limit and the phase of a memory stop', () => {
    expect(memoryStopMessage({ kind: 'host', usedBytes: 21.5 * GiB, limitBytes: 20 * GiB, phasePath: ['Building engine', 'Timing tactics'] })).toBe(
      'stopped: host memory 21.5 GiB passed the 20 GiB limit during Building engine › Timing tactics',
    );
    expect(memoryStopMessage({ kind: 'gpu', usedBytes: 9 * GiB, limitBytes: 8 * GiB, phasePath: [] })).toBe(
      'stopped: GPU memory 9 GiB passed the 8 GiB limit before the first phase',
    );
  });

  it('names the out-of-memory killer, where, the peak and the limit', () => {
    expect(oomKillMessage({ limitBytes: 4 * GiB, peakHostBytes: 3.9 * GiB, phasePath: ['Building engine', 'Timing tactics'] })).toBe(
      'killed by the out-of-memory killer at Building engine › Timing tactics, peak 3.9 GiB of 4 GiB',
    );
    expect(oomKillMessage({ peakHostBytes: 3 * GiB })).toBe('killed by the out-of-memory killer before the first phase, peak 3 GiB (no memory limit on its cgroup)');
    expect(oomKillMessage({ limitBytes: GiB, phasePath: ['A'] })).toBe('killed by the out-of-memory killer at A, limit 1 GiB');
  });
});

describe('allocation failures in log lines', () => {
  it('recognises how TensorRT, CUDA and the runtime word them', () => {
    for (const line of [
      '[virtualMemoryBuffer.cpp::resizePhysical::127] Error Code 2: OutOfMemory (no further information)',
      'Cuda Runtime (out of memory)',
      'Requested amount of GPU memory (17179869184 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.',
      'CUDA_ERROR_OUT_OF_MEMORY',
      'std::bad_alloc',
      'Skipping tactic 0x0000000000000000 due to exception: failed to allocate 4294967296 bytes',
    ]) {
      expect(isOutOfMemoryLine(line), line).toBe(true);
    }
    for (const line of ['Timing cache loaded', 'Memory usage: 1.2 GiB', 'Could not find any implementation for node conv1.']) {
      expect(isOutOfMemoryLine(line), line).toBe(false);
    }
  });

  it('says an allocation failure plainly in the error, keeping TensorRT’s own words', () => {
    const oom = 'Requested amount of GPU memory (17179869184 bytes) could not be allocated.';
    expect(plainOutOfMemoryError('Could not find any implementation for node conv1.', oom)).toBe(
      `out of memory: no tactic could be allocated: ${oom} (then: Could not find any implementation for node conv1.)`,
    );
    expect(plainOutOfMemoryError('engine build failed', oom)).toBe(`out of memory: ${oom} (then: engine build failed)`);
    expect(plainOutOfMemoryError('engine build failed', undefined)).toBe('engine build failed');
    const own = 'out of memory: the simulated builder could not allocate 33554432 bytes';
    expect(plainOutOfMemoryError(own, own)).toBe(own);
  });
});
