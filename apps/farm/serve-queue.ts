// What `serve --queue URL [--artifacts DIR]` runs instead of the local build service: serve.ts
// calls createServeService and nothing else changes for the HTTP/SSE layer.
import type { BuildServiceApi } from '../service/api.js';
import type { ServeServiceRequest } from '../service/http/serve.js';
import { createBuildService } from '../service/build-service.js';
import { SharedFolderArtifacts } from './artifacts.js';

/** What serve asks for, plus what only the CLI's own use needs. */
export interface ServeServiceArgs extends ServeServiceRequest {
  /** No "builds go to the farm" line (the CLI's build prints its own). */
  quiet?: boolean;
  /** The command whose lines the farm connection writes (default `trt-build-studio serve`). */
  who?: string;
}

export async function createServeService(args: ServeServiceArgs): Promise<BuildServiceApi> {
  if (!args.queue) {
    return createBuildService({
      outputDir: args.outputDir,
      concurrency: args.concurrency,
      retainFinishedBuilds: args.retainFinishedBuilds,
      onWarning: args.onWarning,
    });
  }
  // Loaded only in farm mode: a local serve or build does not pay for BullMQ and ioredis.
  const { QueueBuildService } = await import('./queue-service.js');
  const { redisUrlOk, safeUrl } = await import('./redis.js');
  const url = redisUrlOk(args.queue);
  let artifacts;
  if (args.artifacts) {
    artifacts = new SharedFolderArtifacts(args.artifacts);
    artifacts.ensure();
  }
  const { DEFAULT_LIMITS } = await import('./farm-store.js');
  const limits = {
    streamMaxLen: args.farmLimits?.eventsPerBuild ?? DEFAULT_LIMITS.streamMaxLen,
    historyMax: args.farmLimits?.history ?? DEFAULT_LIMITS.historyMax,
  };
  // serve's replay mirror keeps as many events per build as Redis does: a resume gets the same.
  const service = await QueueBuildService.create({ url, artifacts, limits, retainEvents: limits.streamMaxLen, who: args.who });
  if (!args.quiet) process.stderr.write(`trt-build-studio serve: builds go to the farm at ${safeUrl(url)}${args.artifacts ? `; artifacts in ${args.artifacts}` : ''}\n`);
  return service;
}
