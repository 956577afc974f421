// Issue 40 item 5: the text an MCP client shows (a tool result's headline and JSON text, a tool
// error) and the message of an LSP error carry no raw control or bidi characters from a name, and
// cut a long one with its length named; the structured content and `data` keep exact values.
import { ResponseError } from 'vscode-languageserver';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../service/api.js';
import { toResponseError, requestFailed } from '../../lsp/errors.js';
import { errorResult, okResult, resultForError } from '../tool-results.js';

const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/;
/** Generated names: each control class at a different place. */
const names = ['\u001b]0;t\u0007', '\u001b[2J', '\r', '\u202e', '\u0085', '\u2066', '\u2028'].map((c, i) => `${'n'.repeat(i)}${c}tensor_${i}`);

describe('MCP tool texts', () => {
  it('escape names in the headline, the error text and the JSON text, and keep structuredContent exact', () => {
    for (const name of names) {
      const ok = okResult({ name }, `built ${name}`);
      const text = (ok.content[0] as { text: string }).text;
      expect(text).not.toMatch(UNSAFE);
      expect((ok.structuredContent as { name: string }).name).toBe(name);
      // The JSON part still parses to the exact name.
      expect(JSON.parse(text.slice(text.indexOf('\n') + 1)).name).toBe(name);
      for (const r of [errorResult(`no input ${name}`), resultForError(new ServiceError('bad_input', `no input ${name}`), 'build'), errorResult(`no ${name}`, { name })]) {
        expect((r.content[0] as { text: string }).text).not.toMatch(UNSAFE);
      }
    }
    const long = resultForError(new ServiceError('not_found', `model not found: /${'p'.repeat(100_000)}`), 'build');
    expect((long.content[0] as { text: string }).text).toMatch(/… \(100001 characters\)$/);
  });
});

describe('LSP error messages', () => {
  it('escape names and cut long values; data keeps exact values', () => {
    for (const name of names) {
      const e = toResponseError('trtBuildStudio.build', new ServiceError('bad_model', `bad node ${name}`));
      expect(e).toBeInstanceOf(ResponseError);
      expect(e.message).not.toMatch(UNSAFE);
      const f = requestFailed('trtBuildStudio.build', `failed at ${name}`, { name });
      expect(f.message).not.toMatch(UNSAFE);
      expect(f.data).toEqual({ name });
    }
    const long = toResponseError('trtBuildStudio.build', new Error('x'.repeat(100_000)));
    expect(long.message.length).toBeLessThan(500);
    expect(long.message).toMatch(/… \(100000 characters\)$/);
  });
});
