// The MCP server's tools, on the same BuildServiceApi as the CLI, the HTTP service and the app.
// Arguments that do not fit a tool (null, unknown keys, bad options) are a JSON-RPC -32602 before
// the tool runs (call-arguments.ts). Past that, every handler returns a tool result, never throws
// for a user's mistake: a missing model, a dynamic input without shapes or a crashed worker is an
// isError result and the server goes on serving.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BuildServiceApi } from '../service/api.js';
import { runBuildTool, startBuildTool, type BuildToolDeps } from './build-tool.js';
import { CancelReasons } from '../surface/cancel-reasons.js';
import { resolveUserPath } from '../surface/user-path.js';
import { resolveWriteTarget } from '../service/output-target.js';
import { installInvalidParamsCheck } from './call-arguments.js';
import { MatrixArgs, MatrixOut, runMatrixTool } from './matrix-tool.js';
import { buildListEntry, buildState } from '../surface/build-result.js';
import { errorResult, okResult, okResultLines, resultForError } from './tool-results.js';
import { BuildArgs, BuildResultOut, BuildStateOut, CheckEngineArgs, InspectArgs, parseBuildOptions } from '../surface/schemas.js';
import { BackendsOut, BuildIdArgs, BuildListOut, CancelOut, ExplainEngineArgs, ExplainEngineOut, NoArgs, StartOut } from './tool-schemas.js';
import { buildLayerReport, explainLayers, fileLayerReport } from '../service/engine-explain.js';
import { checkPrecision } from '../shared/engine-layers.js';
import { ModelSummary } from '../shared/protocol.js';
import { CheckResultSchema, formatReason } from '../shared/engine-manifest.js';
import { checkEngine } from '../service/engine-check.js';
import { checkPluginLibraries, type PluginPolicy } from '../service/plugin-libraries.js';
import { BuildView } from '../shared/build-view.js';

export const SERVER_NAME = 'trt-build-studio';

const INSTRUCTIONS = `Builds NVIDIA TensorRT engines from ONNX models, observably and cancellably.
Typical flow: list_backends → inspect_model (see dynamic inputs) → build_engine (give shapes for the
dynamic inputs; one given none builds each dynamic dimension as 1, as trtexec does, with a warning). build_engine runs until the build ends; send a progress token to get
notifications/progress naming the current phase and the time since TensorRT last reported, cancel the
request (notifications/cancelled) to stop the build at the next step boundary, or pass
timeBudgetSeconds. Builds can take minutes to hours: a client request timeout cancels the build, so
let progress notifications reset it (they arrive at least every few seconds), or use start_build and
poll get_build.
The "simulated" backend stands in where TensorRT is not installed; its output is
not a TensorRT engine and every result says simulated: true.`;

export interface McpToolsOptions extends Omit<BuildToolDeps, 'service' | 'reasons'> {
  version: string;
  /** The server's record of stop requests (one per server; shared with its stop on signals). */
  reasons?: CancelReasons;
  /**
   * The --plugin-dir policy of the service behind the tools: a plugin library it would refuse is
   * refused here first, as invalid arguments (-32602). The service checks again whatever this says.
   */
  pluginPolicy?: PluginPolicy;
}

export function createMcpServer(service: BuildServiceApi, opts: McpToolsOptions): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: opts.version }, { instructions: INSTRUCTIONS });
  const reasons = opts.reasons ?? new CancelReasons();
  const deps: BuildToolDeps = { ...opts, service, reasons };

  server.registerTool(
    'list_backends',
    {
      title: 'List build backends',
      description: 'Build backends (tensorrt, simulated): whether each is available, its version, or why it is not.',
      inputSchema: NoArgs,
      outputSchema: BackendsOut,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      try {
        return okResult({ backends: await service.listBackends() });
      } catch (e) {
        return resultForError(e, 'Cannot list backends');
      }
    },
  );

  server.registerTool(
    'check_engine',
    {
      title: 'Check whether an engine still fits',
      description:
        'Reads the manifest beside an engine and answers "fits", "rebuild" (every reason: TensorRT version, compute capability, GPU model, ' +
        "driver, the model's bytes, an option or shape range, a plugin library, each with the value built with and the value now) or " +
        '"unknown" (no manifest, a manifest describing other bytes, no backend or GPU to compare with).',
      inputSchema: CheckEngineArgs,
      outputSchema: CheckResultSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ enginePath, modelPath, options }) => {
      try {
        const r = await checkEngine(
          {
            enginePath: resolveUserPath(enginePath),
            modelPath: modelPath === undefined ? undefined : resolveUserPath(modelPath),
            options: options === undefined ? undefined : parseBuildOptions(options),
          },
          () => service.listBackends(),
        );
        const head = { fits: 'Fits.', rebuild: `Needs a rebuild: ${r.reasons.map(formatReason).join('; ')}.`, unknown: `Unknown: ${r.missing.map((m) => m.message).join('; ')}.` }[
          r.verdict
        ];
        return okResult(r as unknown as Record<string, unknown>, head);
      } catch (e) {
        return resultForError(e, `Cannot check ${enginePath}`);
      }
    },
  );

  server.registerTool(
    'inspect_model',
    {
      title: 'Inspect an ONNX model',
      description: 'Summary of an ONNX model: inputs and outputs with shapes (symbolic dimensions by name), dynamic inputs, opsets, operator histogram, sizes.',
      inputSchema: InspectArgs,
      outputSchema: ModelSummary,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ path }) => {
      try {
        return okResult(await service.inspectModel(resolveUserPath(path)));
      } catch (e) {
        return resultForError(e, `Cannot inspect ${path}`);
      }
    },
  );

  server.registerTool(
    'explain_engine',
    {
      title: 'Explain what TensorRT built',
      description:
        "What an engine holds, layer by layer, from IEngineInspector's JSON (saved beside every engine this server builds, or " +
        'trtexec --exportLayerInfo): layers per precision and type, the compute layers that run wider than the precision asked ' +
        'for (a build id: what the build asked for), and with a trtexec --exportProfile file the slowest layers and their share.',
      inputSchema: ExplainEngineArgs,
      outputSchema: ExplainEngineOut,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ buildId, path, profilePath, expect, slowest }) => {
      if ((buildId === undefined) === (path === undefined)) return errorResult('explain_engine takes either buildId or path (one of them).');
      try {
        const profile = profilePath === undefined ? undefined : resolveUserPath(profilePath);
        let r = buildId !== undefined ? buildLayerReport(service, buildId, profile) : fileLayerReport(resolveUserPath(path!), profile, expect);
        if (buildId !== undefined && expect !== undefined) r = { ...r, check: checkPrecision(r.layers, expect) };
        const out = explainLayers(r, slowest ?? 10);
        return okResultLines(out as unknown as Record<string, unknown>, out.text.split('\n'));
      } catch (e) {
        return resultForError(e, `Cannot explain ${buildId !== undefined ? `build ${buildId}` : path}`);
      }
    },
  );

  server.registerTool(
    'build_engine',
    {
      title: 'Build a TensorRT engine',
      description:
        'Builds an engine from an ONNX model and returns when the build has ended: status, durations, cancel latency, ' +
        'engine bytes, timing-cache figures and the slowest phases. Sends progress notifications when given a progress ' +
        'token; cancelling the request cancels the build; timeBudgetSeconds cancels it when it runs too long.',
      inputSchema: BuildArgs,
      outputSchema: BuildResultOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) => runBuildTool(deps, args, extra),
  );

  server.registerTool(
    'start_build',
    {
      title: 'Start a TensorRT engine build without waiting',
      description:
        'Same arguments as build_engine, but returns at once with the build id: for agents that poll get_build ' +
        '(and stop with cancel_build) instead of holding one request open for the whole build.',
      inputSchema: BuildArgs,
      outputSchema: StartOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) => startBuildTool(deps, args),
  );

  if (service.startMatrix) {
    server.registerTool(
      'build_matrix',
      {
        title: 'Build one model for several GPU targets (build farm)',
        description:
          'Build farm only: one build per target (labels such as {"gpu": "NVIDIA_L4", "trt": "10.16.0"}), each on a ' +
          'matching farm machine, all followed to their ends. Returns each build as build_engine does, with its target. ' +
          'Progress notifications say each ending; cancelling the request cancels every build.',
        inputSchema: MatrixArgs,
        outputSchema: MatrixOut,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      (args, extra) => runMatrixTool(deps, args, extra),
    );
  }

  server.registerTool(
    'get_build',
    {
      title: 'Get a build',
      description: 'State of a build by id: current phase while running, outcome when finished, slowest phases.',
      inputSchema: BuildIdArgs,
      outputSchema: BuildStateOut,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ id }) => {
      const record = service.getBuild(id);
      if (!record) return errorResult(`No build with id "${id}" (list_builds shows the builds of this server run).`);
      const view = service.getView?.(id);
      const out = buildState(record, view?.cancelling?.reason ?? reasons.get(id), Date.now(), view ? BuildView.fromSnapshot(view) : undefined);
      return okResult(out, out.message);
    },
  );

  server.registerTool(
    'cancel_build',
    {
      title: 'Cancel a build',
      description: 'Asks a queued or running build to stop at the next step boundary. A second cancel of a build that is still ' + 'stopping kills its worker.',
      inputSchema: BuildIdArgs,
      outputSchema: CancelOut,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async ({ id }) => {
      const before = service.getBuild(id);
      if (!before) return errorResult(`No build with id "${id}" (list_builds shows the builds of this server run).`);
      const wasCancelling = before.state === 'cancelling';
      const accepted = reasons.request(service, id, 'user', 'command');
      const state = service.getBuild(id)?.state ?? before.state;
      const message = accepted
        ? wasCancelling
          ? `Build ${id} was already stopping; its worker is being killed.`
          : `Build ${id} will stop at the next step boundary.`
        : `Build ${id} has already finished (${state}); nothing to cancel.`;
      return okResult({ buildId: id, accepted, state, message }, message);
    },
  );

  server.registerTool(
    'list_builds',
    {
      title: 'List builds',
      description:
        'Builds of this server run, oldest first, with their ids and states; builds of other programs that `trt-build-studio watch` reports are listed too, with `watched` (program, pid, command line), and cancel_build stops them.',
      inputSchema: NoArgs,
      outputSchema: BuildListOut,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () =>
      okResult({
        builds: service.listBuilds().map(buildListEntry),
      }),
  );

  // Build options are left open by the input schema (see OptionsArg) and checked here as
  // arguments; so is an output path that may not be written (a FIFO, a device, a directory, a
  // folder someone else controls), which is refused as the CLI's usage error and HTTP's 400 are.
  // So is a plugin library outside the operator's --plugin-dir folders (checked on a copy: the
  // service resolves the paths itself when the build starts).
  const buildArgs = (args: Record<string, unknown>) => {
    const options = parseBuildOptions(args.options);
    if (opts.pluginPolicy) checkPluginLibraries({ ...options }, opts.pluginPolicy);
    if (typeof args.outputPath === 'string' && args.outputPath.trim() !== '') resolveWriteTarget(resolveUserPath(args.outputPath.trim()), 'output');
  };
  installInvalidParamsCheck(server, { build_engine: buildArgs, start_build: buildArgs, ...(service.startMatrix ? { build_matrix: buildArgs } : {}) });
  return server;
}
