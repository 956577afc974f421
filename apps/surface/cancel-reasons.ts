// Why a build this server stopped was cancelled, as this server asked (the caller, its time
// budget, the server shutting down). The build view says it too (view.cancelling, from the
// build.cancelling event) and is read first; this map stands in where no view says it: a build
// whose view the service no longer keeps, or one stopped before its events reached this server.
import type { CancelReason } from '../shared/protocol.js';

export class CancelReasons {
  private readonly reasons = new Map<string, CancelReason>();
  /** The first reason noted for a build wins (a later stop does not change why it stopped). */
  note(id: string, reason: CancelReason): void {
    if (!this.reasons.has(id)) this.reasons.set(id, reason);
  }
  get(id: string): CancelReason | undefined {
    return this.reasons.get(id);
  }
}
