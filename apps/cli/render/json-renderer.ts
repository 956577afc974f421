// --json: exactly the protocol's events, one per line; the last line is build.finished.
// Nothing else ever goes to stdout (messages go to stderr), so `| jq` always works. A slow
// reader gets every event but coalesced steps (see NdjsonWriter); a reader that closes the pipe
// ends the writing quietly and onReaderGone lets the command stop the build.
import type { BuildView } from '../../shared/build-view.js';
import { writeSync } from 'node:fs';
import type { BuildEvent, BuildFinished } from '../../shared/protocol.js';
import { eventJson } from '../../shared/event-json.js';
import { NdjsonWriter } from './ndjson-writer.js';
import type { BuildRenderer } from './renderer.js';

export class JsonRenderer implements BuildRenderer {
  readonly writer: NdjsonWriter;
  /** The events are written as they are: the live view need not fold them (the service's session does). */
  readonly readsView = false;

  constructor(
    private readonly out: NodeJS.WritableStream = process.stdout,
    onReaderGone: (err: NodeJS.ErrnoException) => void = () => {},
  ) {
    this.writer = new NdjsonWriter(out, onReaderGone);
  }

  /** Seq of the last event handed to the writer. */
  private lastSeq = -1;
  /** build.finished has been handed to the writer. */
  private wroteFinished = false;

  begin(): void {}

  events(events: BuildEvent[]): void {
    const last = events.at(-1);
    if (last) this.lastSeq = last.seq;
    // build.finished is a stream's last event, so the last of its batch.
    if (last?.type === 'build.finished') this.wroteFinished = true;
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

  /**
   * The process ends now, on a signal that came after the build's end was known but before its
   * build.finished reached this renderer (it waits behind the subscription's delivery for a few
   * milliseconds). The stream must still end with that line: written straight to the descriptor
   * when everything before it is with the OS, so it lands whole and last. A reader that is behind
   * loses the tail either way (the command does not wait for it once the ending is known).
   */
  exitNow(finished: BuildFinished): void {
    if (this.wroteFinished || !this.writer.caughtUp) return;
    const fd = (this.out as { fd?: unknown }).fd;
    if (typeof fd !== 'number') return;
    this.wroteFinished = true;
    try {
      writeSync(fd, `${eventJson(finished)}\n`);
    } catch {
      // The reader is gone, or its pipe is full: nothing more can reach it.
    }
  }

  flushed(): Promise<void> {
    return this.writer.idle();
  }
}
