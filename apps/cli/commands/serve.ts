// `trt-build-studio serve`: the HTTP/SSE service (apps/service/http/serve.ts) with its build
// service chosen here, where the surfaces are wired: builds on this machine, or on the build farm
// with --queue. The HTTP layer itself never imports the farm.
import { createServeService } from '../../farm/serve-queue.js';
import { runServe as runHttpServe } from '../../service/http/serve.js';

export function runServe(argv: string[]): Promise<number> {
  return runHttpServe(argv, createServeService);
}
