// Activation: starts `trt-build-studio lsp` with the language client, feeds the "TensorRT Build"
// view and output channel from the server's notifications, and registers the commands.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, WorkDoneProgress, WorkDoneProgressCancelNotification } from 'vscode-languageclient/node';
import type { BuildLogLine, BuildView } from '../../../apps/lsp/build-view-notification';
import { BUILD_LOG_NOTIFICATION, BUILD_VIEW_NOTIFICATION } from '../../../apps/lsp/names';
import { BuildLog } from './build-log';
import { BuildTreeProvider } from './build-tree';
import { BuildController, type ServerPort } from './controller';
import { serverOptions } from './server-options';
import type { ModelSettings } from './settings';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = () => vscode.workspace.getConfiguration('trtBuildStudio');
  const channel = vscode.window.createOutputChannel('TensorRT Build');
  const log = new BuildLog(channel);
  const tree = new BuildTreeProvider();
  context.subscriptions.push(channel, vscode.window.registerTreeDataProvider('trtBuildStudio.buildView', tree));

  const lc = new LanguageClient(
    'trtBuildStudio',
    'TRT Build Studio (language server)',
    serverOptions({ path: config().get<string>('server.path', 'trt-build-studio'), extraArgs: config().get<string[]>('server.extraArgs', []) }),
    // Diagnostics arrive for .onnx files; the server needs no documents synchronised.
    { documentSelector: [{ scheme: 'file', pattern: '**/*.onnx' }] },
  );
  client = lc;
  context.subscriptions.push(
    lc.onNotification(BUILD_VIEW_NOTIFICATION, (v: BuildView) => tree.update(v)),
    lc.onNotification(BUILD_LOG_NOTIFICATION, (l: BuildLogLine) => log.lines(l)),
  );

  const port: ServerPort = {
    execute: async <T>(command: string, arg: unknown, workDoneToken?: string | number) => {
      if (!lc.isRunning()) await lc.start();
      return (await lc.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg], ...(workDoneToken !== undefined ? { workDoneToken } : {}) })) as T;
    },
    onProgress: (token, handler) => lc.onProgress(WorkDoneProgress.type, token, handler),
    cancel: (token) => void lc.sendNotification(WorkDoneProgressCancelNotification.type, { token }),
  };
  const controller = new BuildController(port, context.workspaceState, log, () => config().get<ModelSettings['backend']>('defaultBackend', 'auto'));
  context.subscriptions.push(
    vscode.commands.registerCommand('trtBuildStudio.buildEngine', (uri?: vscode.Uri) => controller.build(uri)),
    vscode.commands.registerCommand('trtBuildStudio.stopBuild', () => controller.stop()),
    vscode.commands.registerCommand('trtBuildStudio.forgetModelSettings', (uri?: vscode.Uri) => controller.forget(uri)),
  );
  try {
    await lc.start();
  } catch (e) {
    void vscode.window.showErrorMessage(
      `TRT Build Studio: cannot start "${config().get('server.path')} lsp" (${(e as Error).message}). Set trtBuildStudio.server.path to the trt-build-studio command or its bin/trt-build-studio.js.`,
    );
  }
}

/** Stopping the client sends shutdown + exit: the server cancels its builds and reaps their workers. */
export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
