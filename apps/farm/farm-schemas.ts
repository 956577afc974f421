// What the farm accepts from Redis. Anything that can write to Redis (another version, an
// operator's redis-cli, an attacker on the network) can put anything there, so every record,
// heartbeat, stream entry and job is checked here before any farm code uses it, as every other
// hop checks with zod. A value that fails is reported with its key by the caller and skipped:
// one bad key never stops serve, a worker or `farm status` (issue 40 item 6).
import { z } from 'zod';
import { BuildEvent, BuildRecord, describeZodError } from '../shared/protocol.js';
import { BuildViewSnapshot } from '../shared/build-view-schema.js';

const Labels = z.record(z.string(), z.string());

/** A build id as serve makes them (`f<n>-<hex>`); also what job data and keys may name. */
export const FarmBuildId = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'not a farm build id');

/** Inode, size and mtime of the engine the worker wrote, as it saw it just after the build. */
export const FarmEngineIdentity = z.object({ ino: z.number().int().nonnegative(), size: z.number().int().nonnegative(), mtimeMs: z.number().nonnegative() });
export type FarmEngineIdentity = z.infer<typeof FarmEngineIdentity>;

export const FarmInfoSchema = z.object({
  target: Labels,
  worker: z.object({ id: z.string(), labels: Labels }).optional(),
  waiting: z.string().optional(),
  attempt: z.number().int(),
  retries: z.number().int(),
  engine: FarmEngineIdentity.optional(),
});

export const FarmRecordSchema = BuildRecord.extend({ id: FarmBuildId, farm: FarmInfoSchema, view: BuildViewSnapshot.optional() });

export const FarmRequestSchema = z.object({
  input: z.object({ modelPath: z.string(), outputPath: z.string().optional(), options: z.record(z.string(), z.unknown()).optional() }).passthrough(),
  target: Labels,
  retries: z.number().int().nonnegative(),
});

export const WorkerInfoSchema = z
  .object({
    id: z.string(),
    labels: Labels,
    concurrency: z.number().int().nonnegative(),
    running: z.array(z.string()),
    host: z.string(),
    pid: z.number().int(),
    beatAt: z.number().optional(),
    ttlMs: z.number().optional(),
  })
  .passthrough();

export const JobData = z.object({ buildId: FarmBuildId });

/**
 * `raw` (a Redis string) as JSON checked by `schema`: the value as stored (unknown keys kept, for
 * newer writers), or the reason it is refused, one line.
 */
export function parseStored<T>(schema: z.ZodType, raw: string): { ok: true; value: T } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    return { ok: false, why: `not JSON (${(e as Error).message.split('\n')[0]})` };
  }
  const r = schema.safeParse(json);
  return r.success ? { ok: true, value: json as T } : { ok: false, why: describeZodError(r.error).slice(0, 300) };
}

/**
 * One entry of a build's stream: its payload must be a BuildEvent of this build, stored under the
 * id the farm gives seq n (`0-<n+1>`); an entry added by anyone else (an automatic id, another
 * build's event, a forged seq) is refused, so it can neither move a mirror's seq nor end a build.
 */
export function parseStreamEntry(buildId: string, entryId: string, fields: string[]): { ok: true; event: BuildEvent } | { ok: false; why: string } {
  const i = fields.indexOf('e');
  if (i < 0 || i % 2 !== 0) return { ok: false, why: 'no "e" field' };
  const r = parseStored<BuildEvent>(BuildEvent, fields[i + 1]);
  if (!r.ok) return r;
  if (r.value.buildId !== buildId) return { ok: false, why: `event of another build (${JSON.stringify(r.value.buildId).slice(0, 80)})` };
  if (entryId !== `0-${r.value.seq + 1}`) return { ok: false, why: `entry id ${entryId} does not match its seq ${r.value.seq}` };
  return { ok: true, event: r.value };
}
