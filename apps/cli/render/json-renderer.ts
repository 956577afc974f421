// --json: exactly the protocol's events, one per line; the last line is build.finished.
// Nothing else ever goes to stdout (messages go to stderr), so `| jq` always works. A slow
// reader gets every event but coalesced steps (see NdjsonWriter); a reader that closes the pipe
// ends the writing quietly and onReaderGone lets the command stop the build.
import type { BuildEvent } from '../../shared/protocol.js';
import { NdjsonWriter } from './ndjson-writer.js';
import type { BuildRenderer } from './renderer.js';

export class JsonRenderer implements BuildRenderer {
  readonly writer: NdjsonWriter;

  constructor(out: NodeJS.WritableStream = process.stdout, onReaderGone: (err: NodeJS.ErrnoException) => void = () => {}) {
    this.writer = new NdjsonWriter(out, onReaderGone);
  }

  begin(): void {}

  events(events: BuildEvent[]): void {
    this.writer.write(events);
  }

  stopping(kind: 'cancel' | 'kill', signal: string): void {
    process.stderr.write(kind === 'cancel' ? `${signal}: stopping the build at the next step (again to kill it)\n` : `${signal}: killing the build worker\n`);
  }

  end(): void {}

  flushed(): Promise<void> {
    return this.writer.idle();
  }
}
