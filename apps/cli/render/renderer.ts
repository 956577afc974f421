// What the `build` command tells a renderer. Three implementations, chosen by the output:
// a live tree on a terminal, plain lines for logs and pipes, NDJSON for programs.
import type { BuildView } from '../../shared/build-view.js';
import type { BuildEvent, BuildFinished, BuildRecord } from '../../shared/protocol.js';

export interface BuildRenderer {
  /**
   * False for a renderer that writes the events and never reads the view (--json): the live view
   * then hands the events on without folding them (LiveViewOptions.fold); `view` in event() and
   * events() is then current in its seq only.
   */
  readonly readsView?: boolean;
  /** The build was accepted (queued or running); `record` says which backend will run it. */
  begin(record: BuildRecord): void;
  // The build command follows the build through the shared LiveView (apps/shared/live-view.ts):
  // a renderer shows the view it is handed and never folds events itself.
  /** One event, right after it was folded into `view`: for output that tells each event. */
  event?(event: BuildEvent, view: BuildView): void;
  /** A batch of events, each once and in seq order, all folded into `view` now. */
  events(events: BuildEvent[], view: BuildView): void;
  /**
   * The stream started over (a reset): events up to `view.seq` will not come, and `view` is the
   * build's complete state at that seq. What was shown stays; from here the renderer goes on from
   * `view`, and the events that follow continue it.
   */
  restart(view: BuildView): void;
  /** Ctrl-C / SIGTERM: 'cancel' = stop requested, 'kill' = second request, the worker is killed. */
  stopping(kind: 'cancel' | 'kill', signal: string): void;
  /** The last event has been passed to events(); print the summary, stop timers. */
  end(finished: BuildFinished): void;
  /**
   * The process is about to exit on a signal that came once the build's end was known: a renderer
   * that owes its reader a last line (--json's build.finished) writes it synchronously if it can.
   */
  exitNow?(finished: BuildFinished): void;
  /** Resolves once everything written has left the process (a renderer that holds lines back). */
  flushed?(): Promise<void>;
  /**
   * A promise while the output is too far behind: the build command returns it from its
   * subscription, so the build worker holds its next batch until the output has room.
   */
  backpressure?(): Promise<void> | undefined;
}
