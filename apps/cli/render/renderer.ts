// What the `build` command tells a renderer. Three implementations, chosen by the output:
// a live tree on a terminal, plain lines for logs and pipes, NDJSON for programs.
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';

export interface BuildRenderer {
  /** The build was accepted (queued or running); `record` says which backend will run it. */
  begin(record: BuildRecord): void;
  events(events: BuildEvent[]): void;
  /** Ctrl-C / SIGTERM: 'cancel' = stop requested, 'kill' = second request, the worker is killed. */
  stopping(kind: 'cancel' | 'kill', signal: string): void;
  /** The last event has been passed to events(); print the summary, stop timers. */
  end(finished: BuildFinished): void;
  /** Resolves once everything written has left the process (a renderer that holds lines back). */
  flushed?(): Promise<void>;
}
