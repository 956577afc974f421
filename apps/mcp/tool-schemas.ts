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
    }),
  ),
});
