// The farm's state as GET /api/farm and `trt-build-studio farm status --json` give it (computed by
// apps/farm/farm-status.ts from Redis). Here so the HTTP layer and clients can name the shape
// without depending on the farm's code.
import type { BuildState } from './protocol.js';

type Labels = Record<string, string>;

export interface FarmStatus {
  at: string;
  workers: Array<{
    id: string;
    host: string;
    pid: number;
    labels: Labels;
    slots: number;
    running: string[];
    /** How long ago its last heartbeat was written; null for workers too old to say. */
    lastHeartbeatMsAgo: number | null;
  }>;
  pools: Array<{ target: Labels; queued: Array<{ id: string; queuedAt: string; waiting: string }> }>;
  running: Array<{ id: string; worker?: string; target: Labels; startedAt?: string; attempt: number }>;
  recent: Array<{ id: string; state: BuildState; worker?: string; finishedAt?: string; error?: string }>;
}
