// The numbers of each batch the addon hands to JS live in one buffer per JS environment, reused
// from call to call (native/src/addon/build_job.cc batchNumbers: a new ArrayBuffer per batch was
// the largest part of bench:native's RSS growth). Through the real addon: the buffer is reused,
// builds running at once each get their own events whole and in order, and a listener that
// detaches the buffer (transfers it) does not break the batches after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { BuildOptions, type BuildEvent } from '../../shared/protocol.js';
import { BatchDecoder, loadNative, toNativeRequest } from '../addon.js';
import type { NativeBuildRequest } from '../native-api.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tbs-batch-buffer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function request(name: string): NativeBuildRequest {
  return {
    buildId: name,
    backend: 'simulated',
    modelPath: path.join(dir, `${name}.onnx`),
    outputPath: path.join(dir, `${name}.engine`),
    options: BuildOptions.parse({ backend: 'simulated', simDuration: 0.4, simSeed: 5 }),
    layers: Array.from({ length: 20 }, (_, i) => ({ name: `layer_${i}`, op: 'Conv' })),
    simThreads: 3,
  };
}

/** Runs one build through the raw addon; `onNums` sees each batch's array before it is decoded. */
function run(name: string, onNums: (nums: Float64Array) => void = () => {}): Promise<{ events: BuildEvent[]; buffers: ArrayBufferLike[] }> {
  const req = request(name);
  const decoder = new BatchDecoder(req.buildId, {});
  const events: BuildEvent[] = [];
  const buffers: ArrayBufferLike[] = [];
  return new Promise((resolve, reject) => {
    loadNative().startBuild(toNativeRequest(req), (nums, strs, newNames, firstNameId) => {
      try {
        buffers.push(nums.buffer);
        const batch = decoder.decode(nums, strs, newNames, firstNameId);
        onNums(nums);
        events.push(...batch);
        if (batch.at(-1)?.type === 'build.finished') resolve({ events, buffers });
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

function checkWhole(events: BuildEvent[]): void {
  // In seq order (a step the outbox coalesced while JS was busy leaves a gap: event_outbox.h).
  expect(events.every((e, i) => i === 0 || e.seq > events[i - 1].seq)).toBe(true);
  expect(events.filter((e) => e.type !== 'phase.step').map((e) => e.type)).toContain('phase.finish');
  expect(events[0].type).toBe('build.started');
  const last = events.at(-1)!;
  expect(last.type).toBe('build.finished');
  expect(last.type === 'build.finished' && last.status).toBe('succeeded');
  expect(events.filter((e) => e.type === 'phase.start').length).toBeGreaterThan(20);
}

describe('the batches’ numbers', () => {
  it('come in one reused buffer, and builds running at once each get theirs whole', async () => {
    const [a, b] = await Promise.all([run('a'), run('b')]);
    checkWhole(a.events);
    checkWhole(b.events);
    expect(a.buffers.length).toBeGreaterThan(1);
    // One buffer for every batch of both builds (a new ArrayBuffer per batch before).
    expect(new Set([...a.buffers, ...b.buffers]).size).toBe(1);
  });

  it('survive a listener that transfers the buffer away', async () => {
    const r = await run('detached', (nums) => {
      structuredClone(nums.buffer, { transfer: [nums.buffer as ArrayBuffer] });
      expect(nums.length).toBe(0); // detached: the listener no longer sees the numbers
    });
    checkWhole(r.events);
    expect(new Set(r.buffers).size).toBe(r.buffers.length); // a fresh buffer after each transfer
  });
});
