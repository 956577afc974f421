// The crash site survives the worker: a real worker process (dist/apps/worker/worker.js) builds
// with a crash record, dies by the simulated crash fault (abort() inside the phase), and the
// host's reader (apps/service/crash-site.ts) finds the phase it died in.
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCrashSite } from '../../service/crash-site.js';
import { readWorkerMessage } from '../../../test/support/worker-messages.js';
import { requireBuilt, REPO_ROOT } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const WORKER = path.join(REPO_ROOT, 'dist/apps/worker/worker.js');
let dir: string;
let model: string;

beforeAll(() => {
  requireBuilt();
  dir = tempDir('tbs-crash-record-');
  model = writeModel(path.join(dir, 'm.onnx'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs one build in a real worker process until it exits; returns how it ended and what it sent. */
async function crashAt(phase: string, record: string) {
  const child = fork(WORKER, [], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const phasesSeen: string[] = [];
  child.on('message', (m) => {
    const msg = readWorkerMessage(m);
    if (msg.type === 'events') for (const e of msg.events) if (e.type === 'phase.start') phasesSeen.push(e.name);
    // Like the service: the worker sends its next batch once this one is acknowledged.
    // The worker crashes by design: an ack racing its exit fails with EPIPE, which is expected here.
    if (msg.type === 'events' && child.connected) child.send({ type: 'ack' }, () => undefined);
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  try {
    child.send({
      type: 'start',
      request: {
        buildId: `crash-${phase}`,
        backend: 'simulated',
        modelPath: model,
        outputPath: path.join(dir, 'never.engine'),
        options: { backend: 'simulated', simDuration: 0.3, simSeed: 5, simFault: `crash@${phase}` },
        layers: Array.from({ length: 12 }, (_, i) => ({ name: `conv_${i}`, op: 'Conv' })),
        crashRecordPath: record,
      },
    });
    return { ...(await exit), phasesSeen };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe('crash record of a worker that died', () => {
  for (const phase of ['Timing tactics', 'Optimizing graph', 'Building engine']) {
    it(`names "${phase}" as the deepest open phase after crash@${phase}`, async () => {
      const record = path.join(dir, `${phase.replace(/ /g, '-')}.crash`);
      const r = await crashAt(phase, record);
      expect(r.signal).toBe('SIGABRT');
      const site = readCrashSite(record);
      expect(site?.at(-1)).toBe(phase);
      // Outermost first: the root of the simulated tree heads the path.
      expect(site?.[0]).toBe('Building engine');
      if (phase === 'Timing tactics') expect(site!.length).toBeGreaterThan(2);
    }, 30_000);
  }
});

describe('readCrashSite', () => {
  it('is undefined for a missing file or one that is not a crash record', () => {
    expect(readCrashSite(path.join(dir, 'absent'))).toBeUndefined();
    const other = path.join(dir, 'other');
    fs.writeFileSync(other, 'Building engine\nTiming tactics\n');
    expect(readCrashSite(other)).toBeUndefined();
  });

  it('skips a torn slot and takes the newest complete one', () => {
    const slotSize = 4096;
    const buf = Buffer.alloc(64 + 4 * slotSize);
    buf.write('TBSCRASH', 0, 'latin1');
    buf.writeUInt32LE(1, 8);
    buf.writeUInt32LE(4, 12);
    buf.writeUInt32LE(slotSize, 16);
    const slot = (i: number, begin: bigint, end: bigint, names: string[]) => {
      const at = 64 + i * slotSize;
      const text = Buffer.from(names.join('\n'), 'utf8');
      buf.writeBigUInt64LE(begin, at);
      buf.writeUInt32LE(names.length, at + 8);
      buf.writeUInt32LE(text.length, at + 12);
      text.copy(buf, at + 16);
      buf.writeBigUInt64LE(end, at + slotSize - 8);
    };
    slot(1, 5n, 5n, ['Build', 'Older']);
    slot(2, 6n, 6n, ['Build', 'Newest complete']);
    slot(3, 7n, 3n, ['Build', 'Torn']); // died mid-write: seqEnd still from an older write
    const file = path.join(dir, 'torn');
    fs.writeFileSync(file, buf);
    expect(readCrashSite(file)).toEqual(['Build', 'Newest complete']);
    // Cut short (a partial copy): the slots it still holds count.
    fs.writeFileSync(file, buf.subarray(0, 64 + 2 * slotSize));
    expect(readCrashSite(file)).toEqual(['Build', 'Older']);
  });
});
