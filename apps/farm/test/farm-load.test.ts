// The farm load test (bench/farm.ts) in a small form: a real redis-server, a real serve --queue,
// two worker processes with simulated GPU slots, builds across two targets with SSE watchers, and
// a worker process killed with SIGKILL and restarted under the same id mid-run. Every build must
// end (none stuck), a build whose worker died is retried, and nothing fails. Then Stop is timed
// (request → build.finished at an SSE client) on the farm and on a local serve. The full run is
// `npm run bench:farm` (8 slots, 200 builds, 50 watchers); its figures are in docs/farm.md.
import { describe, expect, it } from 'vitest';
import { runFarmLoad } from '../../../bench/farm.js';

describe('farm under load with a worker killed mid-run', () => {
  it('ends every build, retries the ones a dead worker held, and loses no watcher; a farm Stop costs about a local one', async () => {
    const r = await runFarmLoad({ slots: 2, procs: 2, builds: 10, watchers: 4, simSeconds: 0.6, kills: 1, targets: 2, stops: 4, deadlineMs: 150_000 });
    const why = JSON.stringify(r.notSucceeded);
    expect(r.counts.submitted).toBe(10);
    expect(r.counts.stuck, why).toBe(0);
    expect(r.counts.failed, why).toBe(0);
    expect(r.counts.cancelled, why).toBe(0);
    expect(r.counts.succeeded + r.counts.crashed, why).toBe(10);
    // With two retries allowed, one kill cannot make a build crash for good.
    expect(r.counts.crashed, why).toBe(0);
    expect(r.kills).toHaveLength(1);
    expect(r.latencyMs.eventToWatcher.n).toBeGreaterThan(0);
    expect(r.latencyMs.queueToStart.n).toBe(10);
    // Every Stop ended its build cancelled and was timed, on the farm and locally.
    const stop = r.stopLatencyMs!;
    expect(stop.farm).toMatchObject({ n: 4, notCancelled: 0 });
    expect(stop.local).toMatchObject({ n: 4, notCancelled: 0 });
    // A correctness bound, not the goal (p50 within 100 ms, measured by the full bench): a farm
    // Stop that polled, or waited behind a queue of appends, took seconds under load.
    expect(stop.farm.p50).toBeLessThan(stop.local.p50 + 1500);
  }, 200_000);
});
