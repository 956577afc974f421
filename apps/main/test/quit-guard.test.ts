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
