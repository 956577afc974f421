// The --json writer against a stream that stops accepting data: lines wait (steps coalesced,
// everything else kept, seq still rising), go out on 'drain', and a closed reader ends it quietly.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { NdjsonWriter } from '../render/ndjson-writer.js';

const base = { v: 1 as const, buildId: 'b', t: 0 };
const start = (seq: number, id: number): BuildEvent => ({ ...base, seq, type: 'phase.start', id, parentId: null, name: 'P', nbSteps: 100, instance: 0 });
const step = (seq: number, id: number, n: number): BuildEvent => ({ ...base, seq, type: 'phase.step', id, step: n - 1, stepsDone: n });
const finish = (seq: number, id: number, n: number): BuildEvent => ({ ...base, seq, type: 'phase.finish', id, stepsDone: n, early: true });
const hb = (seq: number): BuildEvent => ({ ...base, seq, type: 'heartbeat', sinceLastCallbackMs: 1, cancelRequested: false });
const log = (seq: number): BuildEvent => ({ ...base, seq, type: 'log', severity: 'info', message: `m${seq}` });

/** A stream whose reader is stalled until release(); then it takes everything. */
class StalledReader extends Writable {
  data = '';
  private held: Array<() => void> = [];
  stalled = true;
  constructor() {
    super({ highWaterMark: 64 });
  }
  _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.data += chunk.toString();
    if (this.stalled) this.held.push(cb);
    else cb();
  }
  release(): void {
    this.stalled = false;
    for (const cb of this.held.splice(0)) cb();
  }
}

const seqs = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).seq as number);

describe('NdjsonWriter', () => {
  it('writes straight through while the reader keeps up', async () => {
    const out = new StalledReader();
    out.release();
    const w = new NdjsonWriter(out);
    w.write([start(0, 1), step(1, 1, 1), step(2, 1, 2)]);
    await w.idle();
    expect(seqs(out.data)).toEqual([0, 1, 2]);
    expect(w.coalesced).toBe(0);
  });

  it('while the reader stalls: latest step per phase, finish folds its step, one heartbeat, nothing else lost', async () => {
    const out = new StalledReader();
    const w = new NdjsonWriter(out);
    // The first write fills the 64-byte buffer: from here on the writer holds lines back.
    w.write([start(0, 1)]);
    w.write([step(1, 1, 1), start(2, 2), hb(3), step(4, 1, 2), step(5, 2, 1), log(6), step(7, 1, 3), hb(8)]);
    w.write([step(9, 2, 2), finish(10, 2, 2), log(11)]);
    let idle = false;
    const done = w.idle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    out.release();
    await done;
    // 1/1, 1/2 (superseded by 1/3), the first heartbeat, 2/1 and 2/2 (folded into the finish).
    expect(w.coalesced).toBe(5);
    expect(seqs(out.data)).toEqual([0, 2, 6, 7, 8, 10, 11]);
    expect(w.peakWaitingBytes).toBeGreaterThan(0);
  });

  it('catches up through many drains with seq rising and every start and finish present', async () => {
    const out = new StalledReader();
    const w = new NdjsonWriter(out);
    let seq = 0;
    const sent: BuildEvent[] = [];
    for (let id = 0; id < 5000; id++) {
      const evs = [start(seq++, id), step(seq++, id, 1), finish(seq++, id, 1), step(seq++, 99999, id + 1)];
      sent.push(...evs);
      w.write(evs);
    }
    out.release();
    await w.idle();
    const got = seqs(out.data);
    expect(got).toEqual([...got].sort((a, b) => a - b));
    const lines = out.data
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as BuildEvent);
    expect(lines.filter((e) => e.type === 'phase.start')).toHaveLength(5000);
    expect(lines.filter((e) => e.type === 'phase.finish')).toHaveLength(5000);
    // The long-running phase 99999 ends with its latest step.
    expect(lines.filter((e) => e.type === 'phase.step' && e.id === 99999).pop()).toMatchObject({ stepsDone: 5000 });
  });

  it('past its high-water mark room() asks the producer to wait until the reader took half of it', async () => {
    const out = new StalledReader();
    const w = new NdjsonWriter(out, () => {}, 2000);
    expect(w.room()).toBeUndefined();
    w.write([start(0, 1)]); // fills the stream's 64-byte buffer: lines wait from here on
    let seq = 1;
    while (w.waitingBytes < 2000) w.write([log(seq++)]);
    const room = w.room();
    expect(room).toBeInstanceOf(Promise);
    let ready = false;
    void room!.then(() => (ready = true));
    await new Promise((r) => setImmediate(r));
    expect(ready).toBe(false);
    out.release();
    await room;
    expect(w.waitingBytes).toBeLessThanOrEqual(1000);
    await w.idle();
    // Nothing was lost while the producer waited.
    expect(seqs(out.data)).toEqual(Array.from({ length: seq }, (_, i) => i));
  });

  it('room() settles when the reader goes away, so a waiting producer never hangs', async () => {
    const out = new StalledReader();
    const w = new NdjsonWriter(out, () => {}, 500);
    w.write([start(0, 1)]);
    for (let i = 1; w.waitingBytes < 500; i++) w.write([log(i)]);
    const room = w.room()!;
    out.destroy(Object.assign(new Error('EPIPE'), { code: 'EPIPE' }));
    await room;
    expect(w.closed).toBe(true);
  });

  it('a reader that goes away (EPIPE) ends the writing quietly and says so once', async () => {
    const out = new StalledReader();
    let closed = 0;
    const w = new NdjsonWriter(out, () => closed++);
    w.write([start(0, 1)]);
    w.write([log(1)]);
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    out.destroy(epipe);
    await w.idle();
    expect(closed).toBe(1);
    expect(w.closed).toBe(true);
    w.write([log(2)]); // ignored, no throw
  });
});
