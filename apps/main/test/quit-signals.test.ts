import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { installQuitSignals } from '../quit-signals.js';

describe('quit on SIGTERM/SIGINT', () => {
  it('quits at once on either signal (no question), every time one arrives', () => {
    const proc = new EventEmitter();
    const quitNow = vi.fn();
    const lines: string[] = [];
    installQuitSignals(proc as never, quitNow, (m) => lines.push(m));
    expect([proc.listenerCount('SIGTERM'), proc.listenerCount('SIGINT')]).toEqual([1, 1]);
    proc.emit('SIGTERM', 'SIGTERM');
    proc.emit('SIGINT', 'SIGINT');
    // A second SIGTERM takes the same path (Electron's own handler would have killed main).
    proc.emit('SIGTERM', 'SIGTERM');
    expect(quitNow.mock.calls).toEqual([['SIGTERM'], ['SIGINT'], ['SIGTERM']]);
    expect(lines).toEqual(['SIGTERM: stopping builds and quitting', 'SIGINT: stopping builds and quitting', 'SIGTERM: stopping builds and quitting']);
  });

  it('says so when a listener was installed earlier (libuv kept the handler Electron replaced)', () => {
    const proc = new EventEmitter();
    proc.on('SIGTERM', () => undefined);
    const lines: string[] = [];
    installQuitSignals(
      proc as never,
      () => undefined,
      (m) => lines.push(m),
    );
    expect(lines).toEqual(["SIGTERM already had a listener before 'ready': Electron's handler may take it"]);
  });
});
