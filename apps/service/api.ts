// The build service's public surface, as the code of the service and above it uses it. Its calls
// are described once, in apps/shared/build-service-api.ts (so the page's clients take their shapes
// from the same text); this file adds what only code beside the service can use (the engine file's
// identity on disk) and the error a call throws. Implemented by ./build-service.ts (local builds)
// and apps/farm/queue-service.ts (the build farm).
import type { BuildServiceCalls, ServiceErrorCode } from '../shared/build-service-api.js';
import type { EngineRecord } from './engine-identity.js';

export type { BuildRoutesRead } from '../shared/build-routes.js';
export type {
  BuildServiceCalls,
  FarmServiceCalls,
  LocalServiceCalls,
  ServiceErrorCode,
  StartBuildInput,
  StartMatrixInput,
  SubscribeOpts,
  Subscription,
} from '../shared/build-service-api.js';

/** An error whose message is fit to show a user as it is. */
export class ServiceError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export interface BuildServiceApi extends BuildServiceCalls {
  /**
   * The engine file as the build left it (device, inode, size, mtime), to compare with the file
   * actually opened before serving it. Absent where the service cannot know it.
   */
  engineRecord?(id: string): EngineRecord | undefined;
}
