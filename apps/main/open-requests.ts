// Models to open that arrive from outside the page (command line, a second instance, the OS).
// The first ones arrive before the page has loaded and subscribed, so they wait here until the
// page asks for them; later ones are pushed as they come.
import { PUSH } from './ipc-channels.js';

export interface OpenTarget {
  readonly id: number;
  send(channel: string, message: { path: string }): void;
  isDestroyed(): boolean;
}

export class OpenRequests {
  private pending: string[] = [];
  private listener: OpenTarget | null = null;

  constructor(private readonly target: () => OpenTarget | null) {}

  request(p: string): void {
    const t = this.target();
    if (t && !t.isDestroyed() && this.listener?.id === t.id) t.send(PUSH.openRequest, { path: p });
    else this.pending.push(p);
  }

  /** The page of webContents `id` is now listening: hand over what waited. */
  take(id: number): string[] {
    const t = this.target();
    // Only the main window's page gets them; anything else leaves them waiting for it.
    if (!t || t.id !== id) return [];
    this.listener = t;
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** The page reloaded or went away: hold requests again until it asks. */
  reset(): void {
    this.listener = null;
  }
}
