// trtBuildStudio.explainEngine (issue 36 item 5): what TensorRT built, layer by layer, the same
// answer as MCP's explain_engine and GET /api/builds/{id}/layers (apps/service/engine-explain.ts).
// Takes a build id of this server, or an engine / layer JSON as a path or file:// URI.
import { z } from 'zod';
import type { BuildServiceApi } from '../service/api.js';
import { buildLayerReport, explainLayers, fileLayerReport, type EngineExplanation } from '../service/engine-explain.js';
import { checkPrecision } from '../shared/engine-layers.js';
import { describeZodError } from '../shared/protocol.js';
import { UsageError } from '../shared/usage-error.js';
import { fileArg } from './paths.js';

const Text = z.string().trim().min(1, 'must not be empty');
export const ExplainEngineCommandArgs = z.strictObject({
  buildId: Text.optional(),
  path: Text.optional(),
  profilePath: Text.optional(),
  expect: z.enum(['fp4', 'int4', 'fp8', 'int8', 'fp16', 'bf16', 'fp32']).optional(),
  slowest: z.number().int().min(1).max(100).optional(),
});

export const EXPLAIN_USAGE = 'expects {"buildId": "<id>"} or {"path": "<engine | layers.json>"}, with "profilePath"?, "expect"? (a precision), "slowest"?';

export function explainEngineCommand(service: Pick<BuildServiceApi, 'getBuild' | 'enginePath'>, arg: unknown): EngineExplanation {
  const parsed = ExplainEngineCommandArgs.safeParse(arg);
  if (!parsed.success) throw new UsageError(`${EXPLAIN_USAGE}: ${describeZodError(parsed.error)}`);
  const { buildId, path, profilePath, expect, slowest } = parsed.data;
  if ((buildId === undefined) === (path === undefined)) throw new UsageError(`${EXPLAIN_USAGE}: give one of buildId and path`);
  const profile = profilePath === undefined ? undefined : fileArg(profilePath, 'profilePath');
  let r = buildId !== undefined ? buildLayerReport(service, buildId, profile) : fileLayerReport(fileArg(path!, 'path'), profile, expect);
  if (buildId !== undefined && expect !== undefined) r = { ...r, check: checkPrecision(r.layers, expect) };
  return explainLayers(r, slowest ?? 10);
}
