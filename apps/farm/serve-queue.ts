// What `serve --queue URL [--artifacts DIR]` runs instead of the local build service: serve.ts
// calls createServeService and nothing else changes for the HTTP/SSE layer.
import type { BuildServiceApi } from '../service/api.js';
import { createBuildService } from '../service/build-service.js';
import { SharedFolderArtifacts } from './artifacts.js';

export interface ServeServiceArgs {
  queue?: string;
  artifacts?: string;
  outputDir?: string;
  concurrency?: number;
  /** Local service: finished builds whose details are kept (the rest keep their summary). */
  retainFinishedBuilds?: number;
  /** Local service: warnings that are not about one build (e.g. the predicted-end store). */
  onWarning?: (message: string) => void;
  /** No "builds go to the farm" line (the CLI's build prints its own). */
  quiet?: boolean;
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
  const service = await QueueBuildService.create({ url, artifacts });
  if (!args.quiet) process.stderr.write(`trt-build-studio serve: builds go to the farm at ${safeUrl(url)}${args.artifacts ? `; artifacts in ${args.artifacts}` : ''}\n`);
  return service;
}
