import { describe, expect, it } from 'vitest';
import { shortcutFor } from '../lib/shortcuts.js';

const k = (key: string, m: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }> = {}) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...m,
});

describe('shortcutFor', () => {
  it('maps Ctrl+O/B/S/. on Linux/Windows, Cmd on macOS', () => {
    expect(shortcutFor(k('o', { ctrlKey: true }), false)).toBe('open');
    expect(shortcutFor(k('B', { ctrlKey: true }), false)).toBe('build');
    expect(shortcutFor(k('s', { ctrlKey: true }), false)).toBe('save');
    expect(shortcutFor(k('.', { ctrlKey: true }), false)).toBe('stop');
    expect(shortcutFor(k('.', { metaKey: true }), true)).toBe('stop');
    expect(shortcutFor(k('s', { metaKey: true }), true)).toBe('save');
    expect(shortcutFor(k('s', { ctrlKey: true }), true)).toBeNull();
    expect(shortcutFor(k('s', { metaKey: true }), false)).toBeNull();
    expect(shortcutFor(k('o', { ctrlKey: true, shiftKey: true }), false)).toBeNull();
    expect(shortcutFor(k('o'), false)).toBeNull();
  });

  it('never treats a bare Escape as Stop (it closes pickers and clears fields)', () => {
    expect(shortcutFor(k('Escape'), false)).toBeNull();
    expect(shortcutFor(k('Escape'), true)).toBeNull();
    expect(shortcutFor(k('.'), false)).toBeNull();
  });
});
