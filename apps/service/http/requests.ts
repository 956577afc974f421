// Schemas of the JSON bodies the API accepts. Unknown fields are refused (a typo such as
// "optlevel" must not silently build with defaults), and errors name the offending field.
import { z } from 'zod';
import { BuildOptions, describeZodError } from '../../shared/protocol.js';
import type { StartBuildInput } from '../api.js';
import { ErrorResponse } from './errors.js';
import { checkClientPath } from './paths.js';

const StrictOptions = z.strictObject(BuildOptions.shape);

export const StartBuildBody = z.strictObject({
  modelPath: z.string().min(1),
  outputPath: z.string().min(1).optional(),
  options: StrictOptions.optional(),
  timeBudgetSeconds: z.number().positive().optional(),
  // Build farm (serve --queue): where the build may run; a matrix makes one build per target.
  target: z.record(z.string(), z.string()).optional(),
  targets: z.array(z.record(z.string(), z.string())).min(1).max(256).optional(),
  retries: z.number().int().min(0).max(10).optional(),
});

export const ModelPathBody = z.strictObject({ path: z.string().min(1) });

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new ErrorResponse('bad_input', `invalid request: ${describeZodError(result.error)}`);
  return result.data;
}

/**
 * A start request with every client-named path checked and made absolute. `trustedModelPath`
 * is set for uploads, whose path the server generated itself.
 */
export function toStartBuildInput(body: unknown, trustedModelPath?: string): StartBuildInput & { targets?: Array<Record<string, string>> } {
  const parsed = parseBody(StartBuildBody, trustedModelPath === undefined ? body : { ...(body as object), modelPath: trustedModelPath });
  const options = parsed.options ? { ...parsed.options } : undefined;
  if (options?.timingCache !== undefined) options.timingCache = checkClientPath(options.timingCache, 'options.timingCache');
  return {
    modelPath: trustedModelPath ?? checkClientPath(parsed.modelPath, 'modelPath'),
    outputPath: parsed.outputPath === undefined ? undefined : checkClientPath(parsed.outputPath, 'outputPath'),
    options,
    timeBudgetSeconds: parsed.timeBudgetSeconds,
    ...(parsed.target ? { target: parsed.target } : {}),
    ...(parsed.targets ? { targets: parsed.targets } : {}),
    ...(parsed.retries !== undefined ? { retries: parsed.retries } : {}),
  };
}

/** Multipart text fields → the JSON body shape (options as JSON text, numbers as text). */
export function multipartFieldsToBody(fields: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'options') {
      try {
        body.options = JSON.parse(value);
      } catch (e) {
        throw new ErrorResponse('bad_input', `options: invalid JSON: ${(e as Error).message}`);
      }
    } else if (name === 'timeBudgetSeconds') {
      body.timeBudgetSeconds = value.trim() === '' ? undefined : Number(value);
    } else {
      body[name] = value;
    }
  }
  return body;
}
