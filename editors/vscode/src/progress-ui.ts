// The build's LSP work-done progress in VS Code's own progress notification, with Cancel. The
// language client would show server-created progress only in the status bar, where it cannot be
// cancelled; so the extension passes its own workDoneToken and draws the $/progress itself.
// Cancel sends window/workDoneProgress/cancel, which stops the build at the next step boundary.
import * as vscode from 'vscode';
import type { ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageclient';

export type WorkDoneValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** What the progress needs from the language client. */
export interface ProgressClient {
  onProgress(token: ProgressToken, handler: (value: WorkDoneValue) => void): vscode.Disposable;
  cancel(token: ProgressToken): void;
}

export class BuildProgressNotification implements vscode.Disposable {
  private lastPercentage = 0;
  private progress: vscode.Progress<{ message?: string; increment?: number }> | undefined;
  private queued: WorkDoneValue[] = [];
  private finish!: () => void;
  private readonly finished = new Promise<void>((resolve) => (this.finish = resolve));
  private readonly subscription: vscode.Disposable;
  private cancelSent = false;

  constructor(
    private readonly client: ProgressClient,
    readonly token: ProgressToken,
    title: string,
  ) {
    this.subscription = client.onProgress(token, (v) => this.onValue(v));
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, cancel) => {
      this.progress = progress;
      cancel.onCancellationRequested(() => this.requestCancel());
      for (const v of this.queued.splice(0)) this.onValue(v);
      return this.finished;
    });
  }

  requestCancel(): void {
    if (this.cancelSent) return;
    this.cancelSent = true;
    this.progress?.report({ message: 'stopping at the next step boundary…' });
    this.client.cancel(this.token);
  }

  private onValue(v: WorkDoneValue): void {
    if (!this.progress) {
      this.queued.push(v);
      return;
    }
    if (v.kind === 'end') {
      this.finish();
      return;
    }
    const pct = typeof v.percentage === 'number' ? v.percentage : undefined;
    // VS Code adds increments up; the server's percentage only rises, so the difference is >= 0.
    const increment = pct !== undefined && pct > this.lastPercentage ? pct - this.lastPercentage : undefined;
    if (pct !== undefined) this.lastPercentage = Math.max(this.lastPercentage, pct);
    if (v.message === undefined && !increment) return;
    this.progress.report({ ...(v.message !== undefined ? { message: v.message } : {}), ...(increment ? { increment } : {}) });
  }

  /** Closes the notification even if no `end` came (the request failed, the server died). */
  dispose(): void {
    this.subscription.dispose();
    this.finish();
  }
}
