import { describe, expect, it } from 'vitest';
import { shortOutcomeText } from '../lib/outcome-text.js';

describe('shortOutcomeText', () => {
  it('a crash: the deepest phase of the site and how the worker ended', () => {
    expect(
      shortOutcomeText({
        status: 'crashed',
        error: 'the build worker crashed in Building engine › Preparing graph for optimization: it exited without a result (signal SIGSEGV); last output: x',
        lastPhasePath: ['Building engine', 'Preparing graph for optimization'],
      }),
    ).toBe('crashed in Preparing graph for optimization (signal SIGSEGV)');
    expect(shortOutcomeText({ status: 'crashed', lastPhasePath: ['A'] })).toBe('crashed in A');
  });

  it('other errors: the first clause, cut at a word with an ellipsis when long', () => {
    expect(shortOutcomeText({ status: 'failed', error: 'short reason; more detail' })).toBe('short reason');
    const long = 'TensorRT could not parse the model because the node Conv_12 has an input with an unsupported data type int64 and more';
    const s = shortOutcomeText({ status: 'failed', error: long })!;
    expect(s.endsWith('…')).toBe(true);
    expect(s.length).toBeLessThanOrEqual(73);
    expect(long.startsWith(s.slice(0, -1))).toBe(true);
    expect(s.slice(0, -1).endsWith(' ')).toBe(false);
    expect(shortOutcomeText({ status: 'succeeded' })).toBeUndefined();
    // A cut never leaves a parenthesis open.
    expect(shortOutcomeText({ status: 'failed', error: 'simulated failure in phase "Preparing graph for optimization" (fault injected with simFault=fail@Preparing graph)' })).toBe(
      'simulated failure in phase "Preparing graph for optimization"…',
    );
  });
});
