// What the agent and editor surfaces share about a build: its arguments (model, output, options,
// time budget; options checked strictly against the protocol, a UsageError naming the field)
// and the shape of its result and state. zod 4: the MCP SDK turns these into JSON Schema for
// tools/list and validates against them; the LSP validates its command arguments with the same.
// The MCP-only tool schemas are apps/mcp/tool-schemas.ts.
import { z } from 'zod';
import {
  BackendName,
  BuildFinishedEvent,
  BuildOptions,
  BuildState,
  BuildStatus,
  CacheStats,
  CancelReason,
  describeZodError,
  Estimate,
  type BuildOptions as BuildOptionsT,
} from '../shared/protocol.js';
import { BUILD_OPTIONS } from '../shared/build-options.js';
import { UsageError } from '../shared/usage-error.js';

// ─────────────────────────────── build options ──────────────────────────────

/**
 * Strict, so a misspelt option ("optlevel") is an error naming it instead of being dropped.
 * Shapes keep the protocol's preprocessing (trtexec strings → ranges) and its specific messages.
 */
const StrictBuildOptions = z.strictObject({ ...BuildOptions.shape });

/**
 * What tools/list advertises for `options`: the same fields, each with the options table's
 * description, and shapes as a JSON-representable union (the table's `jsonSchema`).
 */
const OPTIONS_JSON_SCHEMA = (() => {
  const documented = z.strictObject(Object.fromEntries(BUILD_OPTIONS.map((e) => [e.field, e.doc ? (e.jsonSchema ?? e.schema).describe(e.doc) : (e.jsonSchema ?? e.schema)])));
  const { $schema: _drop, ...json } = z.toJSONSchema(documented, { io: 'input', target: 'draft-7' });
  return json;
})();

/**
 * `options` is validated by the tool, not the SDK: the SDK reports union failures as a bare
 * "Invalid input", while the protocol's own schema names the field and says what is wrong.
 */
const OptionsArg = z
  .unknown()
  .optional()
  .meta({
    ...OPTIONS_JSON_SCHEMA,
    description:
      'Build options, the same camelCase names as the CLI flags (backend, timingCache, optLevel, workspaceMiB, shapes, ' +
      'stronglyTyped, precision, simDuration, simSeed, simFault, ...).',
  });

/** Parses `options` with the protocol schema; throws a UsageError naming each bad field. */
export function parseBuildOptions(raw: unknown): BuildOptionsT {
  const r = StrictBuildOptions.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ ...i, path: ['options', ...i.path] }));
  throw new UsageError(`Invalid build options: ${describeZodError(new z.ZodError(issues))}`);
}

// ─────────────────────────────────── inputs ─────────────────────────────────

const FilePath = z.string().trim().min(1, 'must not be empty');

export const InspectArgs = z.strictObject({
  path: FilePath.describe("ONNX model file (absolute, or relative to the server's working directory)."),
});
export const BuildArgs = z.strictObject({
  modelPath: FilePath.describe("ONNX model file (absolute, or relative to the server's working directory)."),
  outputPath: FilePath.optional().describe("Where the engine is written (atomically). Default: a file in the service's output folder."),
  options: OptionsArg,
  timeBudgetSeconds: z
    .number()
    .positive()
    .max(7 * 24 * 3600)
    .optional()
    .describe('Cancel the build (reason "timeout") when it has run this long. The result says so.'),
  target: z.record(z.string(), z.string()).optional().describe('Build farm only (mcp --queue): labels the build machine must have, e.g. {"gpu": "NVIDIA_L4", "trt": "10.16.0"}.'),
  retries: z.number().int().min(0).max(10).optional().describe('Build farm only: extra attempts if the build machine is lost (default 0).'),
});
export const CheckEngineArgs = z.strictObject({
  enginePath: FilePath.describe("Engine file (absolute, or relative to the server's working directory); its manifest is <engine>.manifest.json."),
  modelPath: FilePath.optional().describe('Model to compare with. Default: the model the manifest names, when it is still there.'),
  options: OptionsArg.describe('Build options to compare with (defaults count). Absent: options are not compared.'),
});

// ─────────────────────────────────── outputs ────────────────────────────────

export const SlowPhaseOut = z.object({
  path: z.string(),
  depth: z.number().int(),
  instances: z.number().int(),
  wallMs: z.number().describe('Build time during which at least one instance was open (parallel instances count once).'),
  open: z.number().int().describe('Instances still open.'),
  earlyCount: z.number().int().describe('Instances that finished before all their steps were reported (normal in TensorRT).'),
  steps: z.string().optional().describe('"stepsDone/nbSteps" of a phase that ran once.'),
  early: z.boolean().optional(),
});
export const PhaseSummaryOut = z.object({
  phaseCount: z.number().int().describe('Phases started over the whole build.'),
  maxDepth: z.number().int(),
  slowest: z.array(SlowPhaseOut).describe('Phases grouped by name path, longest wall time first.'),
});

export const BuildResultOut = z.object({
  buildId: z.string(),
  status: BuildStatus,
  /** One sentence for people: what happened and, for a cancel, why. */
  message: z.string(),
  cancelReason: CancelReason.optional(),
  backend: BackendName.optional(),
  simulated: z.boolean().optional(),
  ...BuildFinishedEvent.pick({
    durationMs: true,
    cancelLatencyMs: true,
    stopToFinishMs: true,
    engineBytes: true,
    outputPath: true,
    error: true,
    memory: true,
    memoryStop: true,
    oomKill: true,
    layers: true,
  }).shape,
  timingCache: CacheStats.optional(),
  /** crashed: where the builder was when its worker died, outermost phase first. */
  lastPhasePath: z.array(z.string()).optional(),
  phases: PhaseSummaryOut,
});
export type BuildResultOut = z.infer<typeof BuildResultOut>;

export const BuildStateOut = z.object({
  buildId: z.string(),
  state: BuildState,
  message: z.string(),
  modelPath: z.string(),
  outputPath: z.string().optional(),
  queuedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  backend: BackendName.optional(),
  simulated: z.boolean().optional(),
  /** Where a running build is now. */
  currentPhase: z.string().optional(),
  cancelReason: CancelReason.optional(),
  outcome: BuildFinishedEvent.pick({
    status: true,
    durationMs: true,
    cancelLatencyMs: true,
    stopToFinishMs: true,
    engineBytes: true,
    error: true,
    lastPhasePath: true,
    memory: true,
    memoryStop: true,
    oomKill: true,
  }).optional(),
  /** A running build's predicted end, from earlier builds of the same model and options; absent without a basis. */
  remaining: Estimate.optional(),
  timingCache: CacheStats.optional(),
  engineAvailable: z.boolean(),
  phases: PhaseSummaryOut,
  /** A build inside a user's own program (`watch`, a drop-in monitor): whose. */
  watched: z.object({ program: z.string(), pid: z.number().int(), argv: z.array(z.string()), probe: z.string() }).optional(),
});
export type BuildStateOut = z.infer<typeof BuildStateOut>;
