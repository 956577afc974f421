// Diagnostics carry text from the model (input and node names) to the editor: escaped, as every
// human-readable surface shows names.
import { describe, expect, it } from 'vitest';
import { problemDiagnostics } from '../diagnostics.js';

describe('problem diagnostics', () => {
  it('escape control characters and bidi overrides from names in the message', () => {
    const [d] = problemDiagnostics('shapes', 'shapes given for unknown input "nope\u001b[2J"; inputs: "in\u001b]0;pwned\u0007" and "a\u202eb"');
    expect(d!.message).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(d!.message).toContain('nope');
    expect(d!.message).toContain('[2J');
  });

  it('keep one diagnostic per problem line, each escaped', () => {
    const ds = problemDiagnostics('bad-model', 'model refused: 2 problems\n  node "x\u001b[1A" (Foo)\n  node "y" (Bar)');
    expect(ds.map((d) => d.code)).toEqual(['bad-model', 'bad-model', 'bad-model']);
    expect(ds[1]!.message).not.toContain('\u001b');
    expect(ds[2]!.message).toBe('node "y" (Bar)');
  });
});
