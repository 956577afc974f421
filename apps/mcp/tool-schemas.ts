// Input and output schemas of the MCP tools that only MCP has (list, cancel, start, get by id).
// The build arguments and the build's result and state are shared with the LSP: apps/surface/schemas.ts.
import { z } from 'zod';
import { BackendInfo, BuildState } from '../shared/protocol.js';

export const NoArgs = z.strictObject({});

export const BuildIdArgs = z.strictObject({ id: z.string().trim().min(1, 'must not be empty').describe('Build id.') });

export const BackendsOut = z.object({ backends: z.array(BackendInfo) });

export const StartOut = z.object({
  buildId: z.string(),
  state: BuildState,
  outputPath: z.string().optional(),
  message: z.string(),
});

export const CancelOut = z.object({
  buildId: z.string(),
  accepted: z.boolean(),
  state: BuildState,
  message: z.string(),
});

export const BuildListOut = z.object({
  builds: z.array(
    z.object({
      buildId: z.string(),
      state: BuildState,
      modelPath: z.string(),
      outputPath: z.string().optional(),
      queuedAt: z.string(),
      watched: z.object({ program: z.string(), pid: z.number().int(), argv: z.array(z.string()), probe: z.string() }).optional(),
    }),
  ),
});

const Precision = z.enum(['fp4', 'int4', 'fp8', 'int8', 'fp16', 'bf16', 'fp32']);

export const ExplainEngineArgs = z.strictObject({
  buildId: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .optional()
    .describe("A build of this server: its engine's saved layer information, checked against the precision the build asked for."),
  path: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .optional()
    .describe("An engine (its <engine>.layers.json beside it) or a layer JSON file (trtexec --exportLayerInfo), absolute or relative to the server's working directory."),
  profilePath: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .optional()
    .describe('trtexec --exportProfile JSON of the same engine: per-layer times, so the slowest layers can be named.'),
  expect: Precision.optional().describe('Check that no compute layer runs wider than this (a build id checks against what the build asked for unless given).'),
  slowest: z.number().int().min(1).max(100).optional().describe('How many of the slowest layers to list (default 10).'),
});

const Layer = z.object({ name: z.string() }).passthrough();
export const ExplainEngineOut = z
  .object({
    files: z.object({ layers: z.string(), profile: z.string().optional() }),
    schema: z.string(),
    detailed: z.boolean(),
    summary: z.object({ count: z.number(), byPrecision: z.record(z.string(), z.number()), byType: z.record(z.string(), z.number()), totalMs: z.number().optional() }).passthrough(),
    io: z.array(z.object({ name: z.string() }).passthrough()),
    check: z
      .object({ expected: z.string(), checked: z.number(), asAsked: z.number(), wider: z.array(Layer), text: z.string() })
      .passthrough()
      .optional(),
    slowest: z.array(Layer),
    text: z.string(),
  })
  .passthrough();
