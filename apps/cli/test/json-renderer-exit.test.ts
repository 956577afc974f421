// --json when the process exits on a signal right after the build's end is known: the stream
// still ends with build.finished (written straight to the descriptor) whenever the reader has
// everything before it, never twice, and never in the middle of lines still waiting for a reader
// that is behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { tempDir } from '../../../test/support/onnx-gen.js';

const dir = tempDir('tbs-json-exit-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const base = { v: 1 as const, buildId: 'b', t: 0 };
const log = (seq: number): BuildEvent => ({ ...base, seq, type: 'log', severity: 'info', message: `m${seq}` });
const finished: BuildFinished = { ...base, seq: 9, type: 'build.finished', status: 'cancelled', durationMs: 5 };

/** A stream over a file descriptor, as process.stdout is over fd 1; `stalled` holds every write. */
class FdStream extends Writable {
  readonly fd: number;
  private held: Array<() => void> = [];
  constructor(
    readonly file: string,
    private stalled = false,
  ) {
    super({ highWaterMark: 16 });
    this.fd = fs.openSync(file, 'w');
  }
  _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    if (this.stalled) return void this.held.push(() => (fs.writeSync(this.fd, chunk), cb()));
    fs.writeSync(this.fd, chunk);
    cb();
  }
  lines(): string[] {
    return fs.readFileSync(this.file, 'utf8').split('\n').filter(Boolean);
  }
}

let n = 0;
const stream = (stalled = false) => new FdStream(path.join(dir, `out-${n++}.ndjson`), stalled);

describe('JsonRenderer.exitNow', () => {
  it('writes the build.finished the renderer has not had yet, last and whole', () => {
    const out = stream();
    const r = new JsonRenderer(out);
    r.events([log(1), log(2)]);
    r.exitNow(finished);
    expect(out.lines().map((l) => JSON.parse(l))).toEqual([log(1), log(2), finished]);
  });

  it('writes nothing when build.finished went out already', () => {
    const out = stream();
    const r = new JsonRenderer(out);
    r.events([log(1), finished]);
    r.exitNow(finished);
    r.exitNow(finished);
    expect(out.lines()).toHaveLength(2);
  });

  it('writes only once, however many signals end the process', () => {
    const out = stream();
    const r = new JsonRenderer(out);
    r.exitNow(finished);
    r.exitNow(finished);
    expect(out.lines()).toEqual([JSON.stringify(finished)]);
  });

  it('writes nothing while lines still wait for a reader that is behind (it would cut into them)', () => {
    const out = stream(true);
    const r = new JsonRenderer(out);
    r.events([log(1), log(2), log(3)]);
    expect(r.writer.caughtUp).toBe(false);
    r.exitNow(finished);
    expect(out.lines()).toEqual([]);
  });
});
