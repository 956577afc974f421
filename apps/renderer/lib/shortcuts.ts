// Page shortcuts, the same as the Electron menu's accelerators (which arrive via onHostAction).
// Stop is Ctrl+. (Cmd+. on macOS, the platform's own "cancel the running operation" key), never a
// bare Escape: Esc closes pickers and clears fields, and a stray one must not end a two-hour build.
export type ShortcutAction = 'open' | 'build' | 'stop' | 'save';

interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

export function shortcutFor(e: KeyLike, mac: boolean): ShortcutAction | null {
  const mod = mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
  if (!mod || e.altKey || e.shiftKey) return null;
  switch (e.key.toLowerCase()) {
    case 'o':
      return 'open';
    case 'b':
      return 'build';
    case 's':
      return 'save';
    case '.':
      return 'stop';
    default:
      return null;
  }
}
