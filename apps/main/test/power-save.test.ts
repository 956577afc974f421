import { describe, expect, it } from 'vitest';
import { BuildSleepGuard } from '../power-save.js';
import { FakePowerSaveBlocker as FakeBlocker } from './fake-electron.js';

describe('sleep held off while builds run', () => {
  it('starts one prevent-app-suspension blocker for any number of running updates and stops it when none runs', () => {
    const blocker = new FakeBlocker();
    const guard = new BuildSleepGuard(blocker);
    expect(blocker.active.size).toBe(0);
    guard.set(true);
    guard.set(true);
    expect([...blocker.active.values()]).toEqual(['prevent-app-suspension']);
    expect(guard.holding).toBe(true);
    guard.set(false);
    expect(blocker.active.size).toBe(0);
    expect(guard.holding).toBe(false);
    guard.set(false);
    guard.set(true);
    expect(blocker.active.size).toBe(1);
  });

  it('a blocker that fails to start is logged and never stops the build', () => {
    const logs: string[] = [];
    const guard = new BuildSleepGuard(
      {
        start: () => {
          throw new Error('no D-Bus session');
        },
        stop: () => false,
        isStarted: () => false,
      },
      (m) => logs.push(m),
    );
    expect(() => guard.set(true)).not.toThrow();
    expect(logs[0]).toContain('no D-Bus session');
    expect(guard.holding).toBe(false);
  });
});
