// Where a crashed build was: the host gives each worker a crash record path, reads it when the
// worker dies abnormally, and the crashed build.finished carries the path and says it.
//
// The worker really crashes at a phase (simFault crash@<phase>, an abort inside the builder's
// callback), and the record is the one its native layer kept (apps/service/crash-site.ts reads it).
// The launcher below only notes the path the start request names.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import type { ParentToWorker } from '../../worker/messages.js';
import { createBuildService, type BuildService } from '../build-service.js';
import { childProcessLauncher, type WorkerLauncher } from '../worker-host.js';
import { requireBuilt } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
let model: string;
const services: BuildService[] = [];

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-crash-record-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
});
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A launcher that notes the crash record path of each start request; with `withhold`, it takes
 * the path out of the request, as a worker that could not keep a record.
 */
function standIn(seen: { paths: string[] }, withhold = false): WorkerLauncher {
  return () => {
    const ch = childProcessLauncher();
    const send = ch.send.bind(ch);
    return {
      ...ch,
      pid: ch.pid,
      send(msg: ParentToWorker) {
        if (msg.type === 'start' && msg.request.crashRecordPath) {
          seen.paths.push(msg.request.crashRecordPath);
          if (withhold) {
            const { crashRecordPath: _path, ...request } = msg.request;
            msg = { ...msg, request };
          }
        }
        send(msg);
      },
    };
  };
}

function service(launcher: WorkerLauncher): BuildService {
  const s = createBuildService({ outputDir: path.join(dir, 'engines'), crashDir: path.join(dir, 'crash'), profiles: null, launcher });
  services.push(s);
  return s;
}

describe('crash site', () => {
  it.each([
    ['Timing tactics', ['Building engine', 'Building engine from subgraph', 'Computing profile costs', 'Timing tactics']],
    ['Optimizing graph', ['Building engine', 'Building engine from subgraph', 'Optimizing graph']],
    ['Cloning network graph', ['Building engine', 'Cloning network graph']],
  ])('a crash in %s: build.finished carries the path, the error names it, the record is gone', async (phase, site) => {
    const seen = { paths: [] as string[] };
    const svc = service(standIn(seen));
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.5, simSeed: 3, simFault: `crash@${phase}` } });
    const events: BuildEvent[] = [];
    svc.subscribe(rec.id, (evs) => events.push(...evs), { afterSeq: -1 });
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('crashed');
    expect(fin.lastPhasePath).toEqual(site);
    expect(fin.error).toContain(`crashed in ${site.join(' › ')}`);
    expect(fin.error).toMatch(/exited without a result \(signal SIG[A-Z]+\)/);
    // Unique per build, inside the service's crash folder, removed once read.
    expect(seen.paths).toHaveLength(1);
    expect(path.dirname(seen.paths[0])).toBe(path.join(dir, 'crash'));
    expect(path.basename(seen.paths[0])).toContain(rec.id);
    expect(fs.existsSync(seen.paths[0])).toBe(false);
    // The view every surface shows agrees: crashed, its phases closed, elapsed not going backwards.
    const view = BuildView.fromSnapshot(svc.getView(rec.id)!);
    expect(view.status).toBe('crashed');
    expect(view.outcome?.lastPhasePath).toEqual(site);
    expect(view.rows.openCount).toBe(0);
    const lastWorkerT = Math.max(...events.filter((e) => e.type !== 'build.finished').map((e) => e.t));
    expect(fin.durationMs).toBeGreaterThanOrEqual(lastWorkerT);
  });

  it('without a record: crashed, no lastPhasePath, the message as before', async () => {
    const seen = { paths: [] as string[] };
    const svc = service(standIn(seen, true));
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.3, simSeed: 3, simFault: 'crash@Timing tactics' } });
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('crashed');
    expect(fin.lastPhasePath).toBeUndefined();
    expect(fin.error).toMatch(/^the build worker exited without a result/);
  });

  it('a build that succeeds leaves no record behind', async () => {
    const seen = { paths: [] as string[] };
    const svc = service(standIn(seen));
    const rec = await svc.startBuild({ modelPath: model, options: { backend: 'simulated', simDuration: 0.2, simSeed: 3 } });
    const fin = await svc.waitForResult(rec.id);
    expect(fin.status).toBe('succeeded');
    expect(fin.lastPhasePath).toBeUndefined();
    await svc.shutdown(); // the record is removed once the worker has exited
    expect(fs.existsSync(seen.paths[0])).toBe(false);
  });
});
