import { describe, expect, it } from 'vitest';
import { startLocalCrashDumps } from '../crash-dumps.js';

describe('crash dumps', () => {
  it('are written locally and never uploaded; the folder is reported', () => {
    const started: unknown[] = [];
    const folder = startLocalCrashDumps({ start: (o) => started.push(o) }, () => '/home/u/.config/TRT Build Studio/Crashpad');
    expect(started).toEqual([{ uploadToServer: false, compress: true }]);
    expect(started[0]).not.toHaveProperty('submitURL');
    expect(folder).toBe('/home/u/.config/TRT Build Studio/Crashpad');
  });
});
