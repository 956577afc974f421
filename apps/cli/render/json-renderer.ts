// --json: exactly the protocol's events, one per line; the last line is build.finished.
// Nothing else ever goes to stdout (messages go to stderr), so `| jq` always works. A slow
// reader gets every event but coalesced steps (see NdjsonWriter); a reader that closes the pipe
// ends the writing quietly and onReaderGone lets the command stop the build.
import type { BuildView } from '../../shared/build-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import { NdjsonWriter } from './ndjson-writer.js';
import type { BuildRenderer } from './renderer.js';

export class JsonRenderer implements BuildRenderer {
  readonly writer: NdjsonWriter;
  /** The events are written as they are: the live view need not fold them (the service's session does). */
  readonly readsView = false;

  constructor(out: NodeJS.WritableStream = process.stdout, onReaderGone: (err: NodeJS.ErrnoException) => void = () => {}) {
    this.writer = new NdjsonWriter(out, onReaderGone);
  }

  /** Seq of the last event handed to the writer. */
  private lastSeq = -1;

  begin(): void {}

  events(events: BuildEvent[]): void {
    if (events.length) this.lastSeq = events[events.length - 1].seq;
    this.writer.write(events);
  }

  /** A promise while the reader is more than the writer's bound behind (see NdjsonWriter.room). */
  backpressure(): Promise<void> | undefined {
    return this.writer.room();
  }

  /**
   * The protocol has no event for "start over": stdout goes on with the events after the view
   * (seq keeps rising, with a gap), and stderr says which ones will not come. A program that needs
   * the whole tree then reads it from the service's view (`GET /api/builds/{id}/view`).
   */
  restart(view: BuildView): void {
    process.stderr.write(`trt-build-studio build: events #${this.lastSeq + 1}–#${view.seq} are no longer available; the stream goes on after #${view.seq}\n`);
    this.lastSeq = view.seq;
  }

  stopping(kind: 'cancel' | 'kill', signal: string): void {
    process.stderr.write(kind === 'cancel' ? `${signal}: stopping the build at the next step (again to kill it)\n` : `${signal}: killing the build worker\n`);
  }

  end(): void {}

  flushed(): Promise<void> {
    return this.writer.idle();
  }
}
