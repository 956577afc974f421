// --best as trtexec reads it per TensorRT version and GPU (sampleOptions.cpp, BuildOptions::parse).
import { describe, expect, it } from 'vitest';
import { bestPrecisions, INFERENCE_ONLY_FLAGS, RETIRED_FLAGS } from '../trtexec-other-flags.js';
import { UsageError } from '../usage-error.js';

describe('bestPrecisions', () => {
  it.each([
    // 10.x: FP16 and INT8 always (before 10.13), BF16 from compute capability 8.0.
    ['10.0.0', '7.5', ['fp16', 'int8']],
    ['10.3.0', '8.6', ['fp16', 'bf16', 'int8']],
    ['10.16.1', '9.0', ['fp16', 'bf16', 'int8']],
    // 10.13+: no INT8 on compute capability 10.3; before 10.13 it was still on.
    ['10.13.0', '10.3', ['fp16', 'bf16']],
    ['10.12.0', '10.3', ['fp16', 'bf16', 'int8']],
    ['10.16.1', '12.0', ['fp16', 'bf16', 'int8']],
    // GPU unknown (simulated): as on 8.0 or newer.
    ['10.16.0', undefined, ['fp16', 'bf16', 'int8']],
  ])('TensorRT %s on compute capability %s: %j', (version, cc, expected) => {
    const r = bestPrecisions(version, cc, false);
    expect(r.precision).toEqual(expected);
    expect(r.warning).toContain(`--best enables ${expected.map((p) => p.toUpperCase()).join(', ')}`);
    expect(r.warning).toContain(`trtexec ${version.split('.').slice(0, 2).join('.')}`);
    expect(r.warning).toContain(cc === undefined ? 'with the GPU unknown' : `on compute capability ${cc}`);
  });

  it('on TensorRT 11 it is refused with the strong-typing explanation (a usage error)', () => {
    const call = () => bestPrecisions('11.1.0', '9.0', false);
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/TensorRT 11.1.0 has no --best .*strongly typed.*Q\/DQ.*NVIDIA Model Optimizer.*build without --best/);
  });

  it("with --stronglyTyped it is refused in trtexec's words", () => {
    expect(() => bestPrecisions('10.16.1', '9.0', true)).toThrow('--best and --stronglyTyped cannot be both set.');
  });

  it('no flag is both ignored and refused', () => {
    expect(Object.keys(INFERENCE_ONLY_FLAGS).filter((f) => f in RETIRED_FLAGS)).toEqual([]);
  });
});
