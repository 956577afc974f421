// `backends` (text) says what each backend's TensorRT release offers, from the capabilities the
// native layer reported (BackendInfo.capabilities), and says nothing of them where none came.
import { describe, expect, it } from 'vitest';
import type { BackendCapabilities } from '../../shared/protocol.js';
import { trtCapabilities } from '../../shared/trt-capabilities.js';
import { capabilitiesLine, describeBackend } from '../commands/backends.js';

const reported = (version: string): BackendCapabilities => {
  const { major: _major, minor: _minor, ...c } = trtCapabilities(version);
  return c;
};

describe('the capabilities line', () => {
  it.each([
    ['10.3.0', 'precision flags fp16 bf16 int8 fp8 int4; hardware compatibility none, ampere_plus; build routes no; streamed engine no; timing-cache entry counts no'],
    [
      '10.16.0',
      'precision flags fp16 bf16 int8 fp8 int4 fp4 (all deprecated); hardware compatibility none, ampere_plus, same_compute_capability; build routes no; streamed engine yes',
    ],
    ['11.1.0', 'precision flags none (networks are strongly typed); hardware compatibility none, ampere_plus, same_compute_capability; build routes yes'],
  ])('TensorRT %s', (version, words) => {
    expect(capabilitiesLine(reported(version))).toContain(`TensorRT ${version} offers: ${words}`);
  });

  it('names flags deprecated themselves when not every flag is', () => {
    expect(capabilitiesLine({ ...reported('10.16.0'), weakTypingDeprecated: false })).toContain('fp4 (int4, fp4 deprecated);');
  });

  it('is one line of the backend, only where the backend reported capabilities', () => {
    const sim = { name: 'simulated' as const, available: true, version: 'sim-1', emulates: '11.1.0' };
    expect(describeBackend(sim)).not.toContain('offers:');
    expect(describeBackend({ ...sim, capabilities: reported('11.1.0') }).split('\n')).toContain(`           ${capabilitiesLine(reported('11.1.0'))}`);
  });
});
