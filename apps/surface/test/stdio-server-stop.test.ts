// A stdio server's stop (stdio-server-stop.ts): the first stop is graceful, a second one cancels
// every build again (the service kills their workers) and notes it in the server's record of stop
// requests, the one its tools and commands read; fakes stand in for the service and processes.
import { describe, expect, it } from 'vitest';
import type { LiveWorkers } from '../../service/live-workers.js';
import type { ProcessSignals } from '../../process/process-signals.js';
import type { BuildRecord, CancelReason } from '../../shared/protocol.js';
import { CancelReasons } from '../cancel-reasons.js';
import { stdioServerStop } from '../stdio-server-stop.js';

describe('stdioServerStop', () => {
  it('a second stop cancels every build again for the shutdown, noted in the record', async () => {
    const cancels: Array<[string, CancelReason | undefined]> = [];
    const exits: number[] = [];
    const reasons = new CancelReasons();
    reasons.note('b-2', 'user'); // stopped by its caller first: that stays why
    let finishShutdown!: () => void;
    const stop = stdioServerStop({
      service: {
        listBuilds: () => [{ id: 'b-1' }, { id: 'b-2' }] as BuildRecord[],
        cancelBuild: (id, reason) => (cancels.push([id, reason]), true),
      },
      workers: { pids: () => [], killAll: () => [] } as unknown as LiveWorkers,
      signals: { hardExit: (code: number) => void exits.push(code) } as unknown as ProcessSignals,
      log: () => undefined,
      reasons,
      shutdown: () => new Promise<void>((r) => (finishShutdown = r)),
      release: () => undefined,
    });
    stop.stop('SIGTERM');
    expect(cancels).toEqual([]); // graceful: the server's shutdown cancels
    stop.stop('SIGTERM');
    expect(cancels).toEqual([
      ['b-1', 'shutdown'],
      ['b-2', 'shutdown'],
    ]);
    expect(reasons.get('b-1')).toBe('shutdown');
    expect(reasons.get('b-2')).toBe('user');
    expect(reasons.requests('b-1', 'shutdown')).toBe(1);
    finishShutdown();
    expect(await stop.done).toBe(0);
    stop.stop('SIGTERM');
    expect(exits).toEqual([0]);
  });
});
