// LSP work-done progress for one build: `begin` (title naming the model, cancellable), `report`s
// paced by the MCP surface's ProgressNotifier (throttled, with heartbeats in silent stretches, the
// phase path and the time since the last TensorRT callback in the message), and an `end` that
// says how the build ended. The percentage is the build view's fraction, as a ratchet (./percentage.ts).
import type { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageserver';
import { ProgressNotifier, type NotifierOptions } from '../surface/progress-notifier.js';
import type { BuildEvent } from '../shared/protocol.js';
import { RisingPercentage } from './percentage.js';

export type WorkDoneValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export interface WorkDoneOptions {
  token: ProgressToken;
  /** The build the reports are about (the notifier's live view follows it). */
  buildId?: string;
  /** Sends one `$/progress`; must not throw. */
  send(token: ProgressToken, value: WorkDoneValue): void;
  pacing?: Pick<NotifierOptions, 'minIntervalMs' | 'heartbeatMs' | 'silentAfterMs'>;
  now?: () => number;
}

export class WorkDoneBuildProgress {
  readonly notifier: ProgressNotifier;
  readonly percentage = new RisingPercentage();
  private ended = false;
  /** begin() said the build waits behind another one: its queued reports say so. */
  private waitingBehind = false;

  constructor(private readonly opts: WorkDoneOptions) {
    this.notifier = new ProgressNotifier({
      ...opts.pacing,
      buildId: opts.buildId,
      now: opts.now,
      waitingBehind: () => this.waitingBehind,
      send: (u) => {
        if (this.ended) return;
        this.opts.send(this.opts.token, {
          kind: 'report',
          cancellable: true,
          message: u.message,
          percentage: this.percentage.next(this.notifier.view),
        });
      },
    });
  }

  /** The build view the reports are made from (the notifier's). */
  get view() {
    return this.notifier.view;
  }

  /**
   * `begin`. A build that waits behind another one gets its first report (which says so) right
   * away; one that is starting gets it with its first event, a few milliseconds later, because
   * until then the state reads "queued" and the report would claim a wait that is not happening.
   */
  begin(title: string, waitingBehindAnother: boolean): void {
    this.waitingBehind = waitingBehindAnother;
    this.opts.send(this.opts.token, {
      kind: 'begin',
      title,
      cancellable: true,
      percentage: 0,
      message: waitingBehindAnother ? 'queued behind an earlier build' : 'starting the build worker',
    });
    if (waitingBehindAnother) this.notifier.start();
  }

  onEvents(events: readonly BuildEvent[]): void {
    this.notifier.onEvents(events);
  }

  /** The last message for this token; nothing is sent after it. A written engine shows 100 %. */
  end(message: string, succeeded: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.notifier.stop();
    // `end` has no percentage: a finished bar gets its 100 from one last report.
    if (succeeded) this.opts.send(this.opts.token, { kind: 'report', message, percentage: this.percentage.final(true) });
    this.opts.send(this.opts.token, { kind: 'end', message });
  }

  /** Stops reporting without an `end` (the connection is gone). */
  stop(): void {
    this.ended = true;
    this.notifier.stop();
  }
}
