// Page shortcuts, the same as the Electron menu's accelerators (which arrive via onHostAction).
export type ShortcutAction = 'open' | 'build' | 'stop' | 'save';

interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

export function shortcutFor(e: KeyLike, mac: boolean): ShortcutAction | null {
  if (e.key === 'Escape' && !e.ctrlKey && !e.metaKey && !e.altKey) return 'stop';
  const mod = mac ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey;
  if (!mod || e.altKey || e.shiftKey) return null;
  switch (e.key.toLowerCase()) {
    case 'o':
      return 'open';
    case 'b':
      return 'build';
    case 's':
      return 'save';
    default:
      return null;
  }
}
