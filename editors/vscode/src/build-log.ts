// The "TensorRT Build" output channel: what each build did, its log lines and how it ended.
import type * as vscode from 'vscode';
import type { BuildLogLine } from '../../../apps/lsp/build-view-notification';

export class BuildLog {
  constructor(private readonly channel: Pick<vscode.OutputChannel, 'appendLine'>) {}

  started(modelPath: string, args: unknown): void {
    this.channel.appendLine(`▶ ${new Date().toISOString()} building ${modelPath}`);
    this.channel.appendLine(`  arguments: ${JSON.stringify(args)}`);
  }

  lines(batch: BuildLogLine): void {
    for (const l of batch.lines) this.channel.appendLine(`  [${batch.buildId} +${(l.t / 1000).toFixed(3)} s] ${l.severity.toUpperCase()}: ${l.message}`);
  }

  ended(message: string): void {
    this.channel.appendLine(`■ ${message}`);
  }
}
