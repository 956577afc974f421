import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { installQuitGuard } from '../quit-guard.js';
import { fakeEvent } from './fake-electron.js';

class FakeApp extends EventEmitter {
  quitCalls = 0;
  /** Like Electron: quit() emits before-quit; the app only exits if nobody prevented it. */
  exited = false;
  quit() {
    this.quitCalls++;
    const e = fakeEvent({});
    this.emit('before-quit', e);
    if (!e.defaultPrevented) this.exited = true;
  }
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('quitting during a build', () => {
  it('holds the quit until the service has cancelled its builds and workers are gone', async () => {
    const app = new FakeApp();
    const shutdown = deferred();
    const order: string[] = [];
    const service = {
      shutdown: vi.fn(() => {
        order.push('shutdown');
        return shutdown.promise.then(() => void order.push('builds stopped'));
      }),
    };
    const killWorkers = vi.fn(async () => void order.push('kill leftovers'));
    const guard = installQuitGuard({ app, service, killWorkers });

    app.quit();
    expect(app.exited).toBe(false);
    // A second Quit (impatient user) neither exits nor starts a second shutdown.
    app.quit();
    expect(app.exited).toBe(false);
    expect(service.shutdown).toHaveBeenCalledTimes(1);

    shutdown.resolve();
    await guard.done;
    expect(app.exited).toBe(true);
    expect(order).toEqual(['shutdown', 'builds stopped', 'kill leftovers']);
  });

  it('kills the workers and quits anyway when the graceful stop takes too long', async () => {
    const app = new FakeApp();
    const logs: string[] = [];
    const killWorkers = vi.fn(async () => undefined);
    const guard = installQuitGuard({ app, service: { shutdown: () => new Promise<void>(() => undefined) }, killWorkers, graceMs: 30, log: (m) => logs.push(m) });
    const started = Date.now();
    app.quit();
    await guard.done;
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(killWorkers).toHaveBeenCalledTimes(1);
    expect(app.exited).toBe(true);
    expect(logs.join('\n')).toMatch(/did not stop within 30 ms/);
  });

  it('still quits when shutdown throws', async () => {
    const app = new FakeApp();
    const guard = installQuitGuard({ app, service: { shutdown: async () => Promise.reject(new Error('boom')) }, killWorkers: async () => undefined });
    app.quit();
    await guard.done;
    expect(app.exited).toBe(true);
  });
});

describe('quitting while a build runs asks first', () => {
  const service = () => ({ shutdown: vi.fn(async () => undefined) });

  it('"Keep building" leaves the build running and the app open; the next quit asks again', async () => {
    const app = new FakeApp();
    const svc = service();
    const confirmStop = vi.fn(async () => false);
    const guard = installQuitGuard({ app, service: svc, killWorkers: async () => undefined, isBuilding: () => true, confirmStop });
    app.quit();
    await vi.waitFor(() => expect(guard.state).toBe('idle'));
    expect(confirmStop).toHaveBeenCalledTimes(1);
    expect(svc.shutdown).not.toHaveBeenCalled();
    expect(app.exited).toBe(false);
    app.quit();
    await vi.waitFor(() => expect(confirmStop).toHaveBeenCalledTimes(2));
    expect(svc.shutdown).not.toHaveBeenCalled();
  });

  it('"Stop and quit" stops the builds, then quits; a second quit while the question is open does not ask twice', async () => {
    const app = new FakeApp();
    const svc = service();
    let answer!: (stop: boolean) => void;
    const confirmStop = vi.fn(() => new Promise<boolean>((r) => (answer = r)));
    const guard = installQuitGuard({ app, service: svc, killWorkers: async () => undefined, isBuilding: () => true, confirmStop });
    app.quit();
    app.quit();
    expect(confirmStop).toHaveBeenCalledTimes(1);
    expect(guard.state).toBe('asking');
    answer(true);
    await guard.done;
    expect(svc.shutdown).toHaveBeenCalledTimes(1);
    expect(app.exited).toBe(true);
  });

  it('does not ask when nothing is building, nor for a quit already confirmed (window close, a signal)', async () => {
    const idleApp = new FakeApp();
    const ask = vi.fn(async () => true);
    const idle = installQuitGuard({ app: idleApp, service: service(), killWorkers: async () => undefined, isBuilding: () => false, confirmStop: ask });
    idleApp.quit();
    await idle.done;
    expect(ask).not.toHaveBeenCalled();

    const app = new FakeApp();
    const guard = installQuitGuard({ app, service: service(), killWorkers: async () => undefined, isBuilding: () => true, confirmStop: ask });
    guard.quitConfirmed();
    await guard.done;
    expect(ask).not.toHaveBeenCalled();
    expect(app.exited).toBe(true);
  });

  it('a dialog that fails keeps the build running', async () => {
    const app = new FakeApp();
    const logs: string[] = [];
    const svc = service();
    const guard = installQuitGuard({
      app,
      service: svc,
      killWorkers: async () => undefined,
      isBuilding: () => true,
      confirmStop: async () => Promise.reject(new Error('no display')),
      log: (m) => logs.push(m),
    });
    app.quit();
    await vi.waitFor(() => expect(logs.join()).toContain('no display'));
    expect(guard.state).toBe('idle');
    expect(svc.shutdown).not.toHaveBeenCalled();
  });

  it('a relaunch asked for while quitting relaunches once the quit is done (never swallowed)', async () => {
    const app = new FakeApp() as FakeApp & { relaunched: number; relaunch(): void };
    app.relaunched = 0;
    app.relaunch = () => void app.relaunched++;
    const shutdown = deferred();
    const guard = installQuitGuard({ app, service: { shutdown: () => shutdown.promise }, killWorkers: async () => undefined });
    expect(guard.requestRelaunch()).toBe(false);
    app.quit();
    expect(guard.state).toBe('stopping');
    expect(guard.requestRelaunch()).toBe(true);
    expect(app.relaunched).toBe(0);
    shutdown.resolve();
    await guard.done;
    expect(app.relaunched).toBe(1);
    expect(app.exited).toBe(true);
  });
});
