import { describe, expect, it } from 'vitest';
import { displayLines, displayText } from '../display-text.js';

describe('displayText', () => {
  it('leaves ordinary text, Unicode and backslashes alone', () => {
    for (const s of ['input_ids', 'conv1/weight:0', 'größe 模型 😀', 'C:\\models\\a.onnx', '']) expect(displayText(s)).toBe(s);
  });

  it('escapes terminal escapes, carriage returns and other C0 controls', () => {
    expect(displayText('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(displayText('ok\rEVIL')).toBe('ok\\rEVIL');
    expect(displayText('x\ny\tz\0')).toBe('x\\ny\\tz\\x00');
    expect(displayText('\x07\x08\x0b\x0c\x1f')).toBe('\\x07\\x08\\x0b\\x0c\\x1f');
  });

  it('escapes DEL and C1 controls (CSI U+009B acts like ESC [ on some terminals)', () => {
    expect(displayText('a\x7fb')).toBe('a\\x7fb');
    expect(displayText('\x80\x9b31m\x9f')).toBe('\\x80\\x9b31m\\x9f');
    // Latin-1 letters just above C1 are text.
    expect(displayText('\xa0é\xff')).toBe('\xa0é\xff');
  });

  it('escapes bidi overrides, embeddings, isolates and marks', () => {
    expect(displayText('photo\u202egpj.exe')).toBe('photo\\u202egpj.exe');
    const all = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    for (const c of all) {
      const out = displayText(`<${String.fromCharCode(c)}>`);
      expect(out).toBe(`<\\u${c.toString(16).padStart(4, '0')}>`);
    }
  });

  it('output never contains a character it escapes, for every code unit below U+2100', () => {
    const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    let all = '';
    for (let c = 0; c < 0x2100; c++) all += String.fromCharCode(c);
    expect(unsafe.test(displayText(all))).toBe(false);
  });
});

describe('displayMessage', () => {
  it('cuts a long value with its length named, escapes controls, and leaves short text alone', async () => {
    const { displayMessage, MAX_DISPLAY_MESSAGE } = await import('../display-text.js');
    expect(displayMessage('model not found: /tmp/a.onnx')).toBe('model not found: /tmp/a.onnx');
    for (const n of [301, 5_000, 100_000]) {
      const out = displayMessage(`model not found: /tmp/${'a'.repeat(n)} (ENOENT)`);
      expect(out).toContain(`… (${n + 5} characters)`);
      expect(out.startsWith('model not found: /tmp/aaa')).toBe(true);
      expect(out.endsWith(' (ENOENT)')).toBe(true);
      expect(out.length).toBeLessThan(300);
    }
    // Many short values: the message as a whole is cut.
    const many = displayMessage('word '.repeat(5_000));
    expect(many.length).toBeLessThanOrEqual(MAX_DISPLAY_MESSAGE + 40);
    expect(many).toMatch(/… \(25000 characters\)$/);
    expect(displayMessage('a\u001b[2Jb\u202ec\r')).toBe('a\\x1b[2Jb\\u202ec\\r');
  });
});

describe('displayLines', () => {
  it('keeps a message’s own line breaks and makes each line safe', () => {
    const msg = `m.onnx is not a valid ONNX model for TensorRT: 2 problems\n  1. node "a\u001b[2Jb" reads x\n  2. ${'p'.repeat(5000)}`;
    const out = displayLines(msg);
    const lines = out.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe('  1. node "a\\x1b[2Jb" reads x');
    expect(lines[2]!.length).toBeLessThan(400);
    expect(lines[2]).toContain('(5000 characters)');
  });
});
