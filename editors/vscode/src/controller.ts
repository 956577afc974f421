// "TensorRT: Build Engine" and "TensorRT: Stop Build": the questions, the request to the language
// server, the progress notification, and what is shown when the build ends.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ProgressToken } from 'vscode-languageclient';
import { COMMANDS } from '../../../apps/lsp/names';
import type { BuildLog } from './build-log';
import { BuildProgressNotification, type ProgressClient } from './progress-ui';
import { askSettings, settingsKey, toBuildArgs, type BackendLike, type ModelSettings, type ModelSummaryLike } from './settings';

/** The language server as the controller uses it. */
export interface ServerPort extends ProgressClient {
  execute<T>(command: string, arg: unknown, workDoneToken?: ProgressToken): Promise<T>;
}

export interface BuildResultLike {
  buildId: string;
  status: 'succeeded' | 'cancelled' | 'failed' | 'crashed';
  message: string;
  outputPath?: string;
}

export const BUILDING_CONTEXT = 'trtBuildStudio.building';

let tokenCounter = 0;

export class BuildController {
  private running = 0;

  constructor(
    private readonly server: ServerPort,
    private readonly state: vscode.Memento,
    private readonly log: BuildLog,
    private readonly defaultBackend: () => ModelSettings['backend'],
  ) {}

  /** The model comes from the explorer's context menu, else from a file picker. */
  async build(resource?: vscode.Uri): Promise<BuildResultLike | undefined> {
    let uri = resource instanceof vscode.Uri ? resource : undefined;
    if (!uri) {
      const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'ONNX models': ['onnx'] }, title: 'ONNX model to build' });
      uri = picked?.[0];
      if (!uri) return undefined;
    }
    const modelPath = uri.fsPath;
    let summary: ModelSummaryLike;
    try {
      summary = await this.server.execute<ModelSummaryLike>(COMMANDS.inspect, { path: modelPath });
    } catch (e) {
      // The server has also put the problem on the file (Problems view).
      void vscode.window.showErrorMessage(messageOf(e));
      return undefined;
    }
    // Only to describe the backend choices: a server that cannot list them still builds.
    const backends = await this.server.execute<{ backends: BackendLike[] }>(COMMANDS.backends, {}).then(
      (r) => r.backends,
      () => undefined,
    );
    const settings = await askSettings(modelPath, summary, this.state, this.defaultBackend(), backends);
    if (!settings) return undefined;
    await this.state.update(settingsKey(modelPath), settings);

    const args = toBuildArgs(modelPath, settings, summary);
    const token = `vscode-build-${process.pid}-${++tokenCounter}`;
    const notification = new BuildProgressNotification(this.server, token, `TensorRT: building ${path.basename(modelPath)}`);
    this.log.started(modelPath, args);
    this.setRunning(+1);
    try {
      const result = await this.server.execute<BuildResultLike>(COMMANDS.build, args, token);
      this.log.ended(result.message);
      this.show(result);
      return result;
    } catch (e) {
      const data = (e as { data?: BuildResultLike }).data;
      const message = messageOf(e);
      this.log.ended(message);
      if (data?.status === 'cancelled') void vscode.window.showInformationMessage(data.message);
      else void vscode.window.showErrorMessage(message);
      return data;
    } finally {
      notification.dispose();
      this.setRunning(-1);
    }
  }

  /** Cancels every build this window's server is running. */
  async stop(): Promise<void> {
    try {
      const r = await this.server.execute<{ cancelled: string[]; message: string }>(COMMANDS.cancel, {});
      if (r.cancelled.length === 0) void vscode.window.showInformationMessage('No TensorRT build is running.');
    } catch (e) {
      void vscode.window.showErrorMessage(messageOf(e));
    }
  }

  async forget(resource?: vscode.Uri): Promise<void> {
    if (!(resource instanceof vscode.Uri)) return;
    await this.state.update(settingsKey(resource.fsPath), undefined);
  }

  private show(result: BuildResultLike): void {
    if (result.status === 'succeeded' && result.outputPath) {
      const outputUri = vscode.Uri.file(result.outputPath);
      void vscode.window.showInformationMessage(result.message, 'Reveal Engine').then((choice) => {
        if (choice) void vscode.commands.executeCommand('revealFileInOS', outputUri);
      });
    } else {
      void vscode.window.showInformationMessage(result.message);
    }
  }

  private setRunning(delta: number): void {
    this.running += delta;
    void vscode.commands.executeCommand('setContext', BUILDING_CONTEXT, this.running > 0);
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
