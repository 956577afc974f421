// The language server: capabilities, its commands, progress cancellation, shutdown. It holds
// no documents (ONNX files are binary); it exists for its commands, their work-done progress and
// the diagnostics it publishes on model files. Every handler turns its failures into a
// ResponseError, so no request can take the server down.
import {
  ExecuteCommandRequest,
  TextDocumentSyncKind,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
  type CancellationToken,
  type Connection,
  type ExecuteCommandParams,
  type InitializeResult,
  type ProgressToken,
} from 'vscode-languageserver';
import { randomUUID } from 'node:crypto';
import type { BuildServiceApi } from '../service/api.js';
import { ServiceError } from '../service/api.js';
import { describeZodError } from '../shared/protocol.js';
import { buildListEntry } from '../surface/build-result.js';
import { CancelReasons } from '../surface/cancel-reasons.js';
import { CheckEngineArgs, InspectArgs, parseBuildOptions } from '../surface/schemas.js';
import { checkEngine } from '../service/engine-check.js';
import type { NotifierOptions } from '../surface/progress-notifier.js';
import { ActiveBuilds, runBuildCommand, type LspPort } from './build-command.js';
import { COMMANDS } from './names.js';
import { modelUri, problemDiagnostics } from './diagnostics.js';
import { invalidParams, toResponseError } from './errors.js';
import { fileArg } from './paths.js';
import { explainEngineCommand } from './explain-command.js';

export const SERVER_NAME = 'trt-build-studio';
export { COMMANDS };

export interface LspServerOptions {
  version: string;
  pacing?: Pick<NotifierOptions, 'minIntervalMs' | 'heartbeatMs' | 'silentAfterMs'>;
  viewIntervalMs?: number;
  log?: (line: string) => void;
  /** The server's record of stop requests (one per server; shared with its stop on signals). */
  reasons?: CancelReasons;
}

export interface LspServer {
  /** Cancels this server's running builds and waits for every worker to exit. */
  shutdown(): Promise<void>;
}

export function createLspServer(connection: Connection, service: BuildServiceApi, opts: LspServerOptions): LspServer {
  const log = opts.log ?? (() => {});
  const active = new ActiveBuilds();
  const reasons = opts.reasons ?? new CancelReasons();
  let clientShowsProgress = false;
  let shuttingDown: Promise<void> | undefined;

  // The library's send functions throw synchronously once the connection is closed (stdin ended)
  // or disposed, and reject when the write fails: both are logged, neither may reach a build's
  // progress callback (an uncaught throw there would end the process mid-shutdown).
  const send = (what: string, fn: () => Promise<void>) => {
    try {
      void fn().catch((e: unknown) => log(`${what} not sent: ${(e as Error).message}`));
    } catch (e) {
      log(`${what} not sent: ${(e as Error).message}`);
    }
  };
  const port: LspPort = {
    sendProgress: (token, value) => send('progress', () => connection.sendProgress(WorkDoneProgress.type, token, value)),
    sendNotification: (method, params) => send(method, () => connection.sendNotification(method, params)),
    publishDiagnostics: (uri, diagnostics) => send('diagnostics', () => connection.sendDiagnostics({ uri, diagnostics })),
    createProgressToken: async () => {
      // Only a client that said it shows server-initiated progress may be asked to create a token.
      if (!clientShowsProgress) return undefined;
      const token: ProgressToken = `trt-build-${randomUUID()}`;
      await connection.sendRequest(WorkDoneProgressCreateRequest.type, { token });
      return token;
    },
    log,
  };

  connection.onInitialize((params): InitializeResult => {
    clientShowsProgress = params.capabilities.window?.workDoneProgress === true;
    // Registered here, after the library's own handler (set up just before this one runs), which
    // only knows the tokens it created itself; this one cancels the build behind any token,
    // client-given or server-created.
    connection.onNotification(WorkDoneProgressCancelNotification.type, ({ token }) => {
      const hit = active.cancelByToken(token);
      log(`window/workDoneProgress/cancel for ${String(token)}: ${hit ? 'build cancelled' : 'no running build has this token'}`);
    });
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.None,
        executeCommandProvider: { commands: Object.values(COMMANDS), workDoneProgress: true },
      },
      serverInfo: { name: SERVER_NAME, version: opts.version },
    };
  });

  const handlers: Record<string, (params: ExecuteCommandParams, cancel: CancellationToken) => Promise<unknown>> = {
    [COMMANDS.build]: (params, cancel) => {
      if (shuttingDown) throw invalidParams(COMMANDS.build, 'the server is shutting down');
      return runBuildCommand({ service, reasons, active, port, pacing: opts.pacing, viewIntervalMs: opts.viewIntervalMs }, params.arguments?.[0], {
        workDoneToken: params.workDoneToken,
        cancel,
      });
    },
    [COMMANDS.cancel]: async (params) => {
      const arg = (params.arguments?.[0] ?? {}) as unknown;
      if (typeof arg !== 'object' || arg === null || Array.isArray(arg)) throw invalidParams(COMMANDS.cancel, 'expects {"buildId"?: string}');
      const extra = Object.keys(arg).filter((k) => k !== 'buildId');
      if (extra.length) throw invalidParams(COMMANDS.cancel, `unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')}; it takes {"buildId"?: string}`);
      const { buildId } = arg as { buildId?: unknown };
      if (buildId !== undefined && (typeof buildId !== 'string' || buildId.length === 0)) throw invalidParams(COMMANDS.cancel, 'buildId must be a non-empty string');
      // A watched build (docs/watch.md) is not this server's command, but it is its to stop: the
      // cancel goes to the program's probe, which ends the build at TensorRT's next step.
      if (buildId !== undefined && !active.byId.has(buildId) && service.getBuild(buildId)?.watched) {
        const accepted = reasons.request(service, buildId, 'user', 'command');
        return { cancelled: accepted ? [buildId] : [], message: accepted ? `cancel sent to ${buildId}` : `watched build ${buildId} has already ended or is stopping` };
      }
      if (buildId !== undefined && !active.byId.has(buildId)) {
        throw invalidParams(COMMANDS.cancel, `no running build "${buildId}" started by this server (running: ${[...active.byId.keys()].join(', ') || 'none'})`);
      }
      const ids = buildId === undefined ? [...active.byId.keys()] : [buildId];
      const cancelled = ids.filter((id) => active.byId.get(id)?.cancel());
      return { cancelled, message: cancelled.length ? `cancel sent to ${cancelled.join(', ')}` : 'no running build to cancel' };
    },
    // The builds of this server run, its own and watched ones (labelled: program, pid, command line).
    [COMMANDS.list]: async () => ({
      builds: service.listBuilds().map(buildListEntry),
    }),
    [COMMANDS.inspect]: async (params) => {
      const parsed = InspectArgs.safeParse(params.arguments?.[0]);
      if (!parsed.success) throw invalidParams(COMMANDS.inspect, `expects {"path": "<model.onnx>"}: ${describeZodError(parsed.error)}`);
      const file = fileArg(parsed.data.path, 'path');
      try {
        const summary = await service.inspectModel(file);
        port.publishDiagnostics(modelUri(file), []);
        return summary;
      } catch (e) {
        if (e instanceof ServiceError && e.code === 'bad_model') port.publishDiagnostics(modelUri(file), problemDiagnostics('bad-model', e.message));
        throw e;
      }
    },
    [COMMANDS.backends]: async () => ({ backends: await service.listBackends() }),
    // The same check as `trt-build-studio check`, GET /api/engines/check and MCP's check_engine.
    [COMMANDS.check]: async (params) => {
      const parsed = CheckEngineArgs.safeParse(params.arguments?.[0]);
      if (!parsed.success)
        throw invalidParams(COMMANDS.check, `expects {"enginePath": "<engine>", "modelPath"?: "<model.onnx>", "options"?: {...}}: ${describeZodError(parsed.error)}`);
      const { enginePath, modelPath, options } = parsed.data;
      return checkEngine(
        {
          enginePath: fileArg(enginePath, 'enginePath'),
          modelPath: modelPath === undefined ? undefined : fileArg(modelPath, 'modelPath'),
          options: options === undefined ? undefined : parseBuildOptions(options),
        },
        () => service.listBackends(),
      );
    },
    // The same answer as MCP's explain_engine and GET /api/builds/{id}/layers.
    [COMMANDS.explain]: async (params) => explainEngineCommand(service, params.arguments?.[0]),
  };

  connection.onRequest(ExecuteCommandRequest.type, async (params, cancel) => {
    const command = typeof params?.command === 'string' ? params.command : '(none)';
    const handler = Object.hasOwn(handlers, command) ? handlers[command] : undefined;
    if (!handler) throw invalidParams('workspace/executeCommand', `unknown command "${command}"; this server runs ${Object.values(COMMANDS).join(', ')}`);
    try {
      return await handler(params, cancel);
    } catch (e) {
      const err = toResponseError(command, e);
      log(err.message);
      throw err;
    }
  });

  const shutdown = () => {
    shuttingDown ??= (async () => {
      // The service cancels every queued and running build with reason "shutdown" and waits for
      // (or, past its grace period, kills) each worker.
      for (const id of active.byId.keys()) reasons.note(id, 'shutdown');
      await service.shutdown();
    })();
    return shuttingDown;
  };
  connection.onShutdown(async () => {
    log('shutdown requested: cancelling running builds and stopping their workers');
    await shutdown();
  });
  return { shutdown };
}
