import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countGpus, parseGpus } from '../gpu-slots.js';

describe('worker --gpus', () => {
  it('makes one slot per listed device, per simulated GPU, or per GPU of the machine', () => {
    expect(parseGpus('0,2,3')).toEqual([
      { device: 0, simulated: false },
      { device: 2, simulated: false },
      { device: 3, simulated: false },
    ]);
    expect(parseGpus('sim:2')).toEqual([
      { device: 0, simulated: true },
      { device: 1, simulated: true },
    ]);
    expect(parseGpus('all', () => 3).map((s) => s.device)).toEqual([0, 1, 2]);
    expect(() => parseGpus('all', () => 0)).toThrow(/no GPU found/);
  });

  it("counts GPUs as CUDA will see them: CUDA_VISIBLE_DEVICES first, else the driver's /proc list", () => {
    const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-gpus-'));
    try {
      for (const bus of ['0000:18:00.0', '0000:3b:00.0', '0000:86:00.0']) fs.mkdirSync(path.join(proc, bus));
      expect(countGpus({}, proc)).toBe(3);
      expect(countGpus({ CUDA_VISIBLE_DEVICES: '1,2' }, proc)).toBe(2);
      expect(countGpus({ CUDA_VISIBLE_DEVICES: 'GPU-8e7a1c2d-0000-1111-2222-333344445555' }, proc)).toBe(1);
      // CUDA stops at the first entry it cannot read, and an empty value hides every GPU.
      expect(countGpus({ CUDA_VISIBLE_DEVICES: '0,x,1' }, proc)).toBe(1);
      expect(countGpus({ CUDA_VISIBLE_DEVICES: '' }, proc)).toBe(0);
      expect(countGpus({}, path.join(proc, 'missing'))).toBe(0);
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  });
});
