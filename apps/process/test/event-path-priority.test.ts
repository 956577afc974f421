import * as os from 'node:os';
import { describe, expect, it } from 'vitest';
import { buildNice, EVENT_PATH_BOOST, favourEventPath } from '../event-path-priority.js';

describe('event path priority', () => {
  it('takes the build’s nice value from TBS_BUILD_NICE when a host set a valid one, else the thread’s own', () => {
    expect(buildNice({ TBS_BUILD_NICE: '3' })).toBe(3);
    expect(buildNice({ TBS_BUILD_NICE: '-20' })).toBe(-20);
    for (const bad of ['', '99', '2.5', 'x']) expect(buildNice({ TBS_BUILD_NICE: bad })).toBe(os.getPriority());
    expect(buildNice({})).toBe(os.getPriority());
  });

  it('records the build’s value for later processes and runs the thread ahead of it where the OS allows', () => {
    const before = os.getPriority();
    const env: NodeJS.ProcessEnv = {};
    try {
      const favoured = favourEventPath(env);
      expect(env.TBS_BUILD_NICE).toBe(String(before));
      // Whether it took depends on privileges (root, CAP_SYS_NICE, RLIMIT_NICE); what it says must hold.
      expect(favoured).toBe(os.getPriority() <= Math.max(-20, before - EVENT_PATH_BOOST));
      if (!favoured) expect(os.getPriority()).toBe(before);
      // A second call (a worker started by a favoured serve) keeps the build's value, not its own.
      expect(favourEventPath(env)).toBe(favoured);
      expect(env.TBS_BUILD_NICE).toBe(String(before));
    } finally {
      os.setPriority(before); // raising a nice value back is always allowed
    }
  });
});
