import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { installQuitGuard } from '../quit-guard.js';
import { installQuitSignals } from '../quit-signals.js';
import { fakeEvent } from './fake-electron.js';

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

describe('SIGTERM during a build, wired as main.ts wires it', () => {
  it('stops the builds through the quit guard and quits, without asking, and a second SIGTERM changes nothing', async () => {
    // Electron's app as far as quitting goes: quit() emits before-quit; it exits unless prevented.
    const app = Object.assign(new EventEmitter(), {
      exited: false,
      quit() {
        const e = fakeEvent({});
        this.emit('before-quit', e);
        if (!e.defaultPrevented) this.exited = true;
      },
    });
    let stopBuilds!: () => void;
    const service = { shutdown: vi.fn(() => new Promise<void>((r) => (stopBuilds = r))) };
    const confirmStop = vi.fn(async () => false);
    const killWorkers = vi.fn(async () => undefined);
    const guard = installQuitGuard({ app, service, killWorkers, isBuilding: () => true, confirmStop });
    const proc = new EventEmitter();
    installQuitSignals(proc as never, () => guard.quitConfirmed());

    proc.emit('SIGTERM', 'SIGTERM');
    proc.emit('SIGTERM', 'SIGTERM');
    expect(confirmStop).not.toHaveBeenCalled();
    expect(service.shutdown).toHaveBeenCalledTimes(1);
    expect(app.exited).toBe(false); // held until the builds have stopped
    stopBuilds();
    await guard.done;
    expect(killWorkers).toHaveBeenCalled();
    expect(app.exited).toBe(true);
  });
});
