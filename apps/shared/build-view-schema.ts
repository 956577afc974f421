// The wire form of a build view's snapshot (build-view.ts), validated wherever it crosses a
// process boundary: the SSE `reset` event, the view endpoint, Electron IPC.
import { z } from 'zod';
import { MEMORY_TIMELINE_POINTS } from './memory-track.js';
import { VIEW_VERSION } from './view-version.js';
import { BuildFinishedEvent, BuildMemory, BuildStartedEvent, CacheStats, CancelReason, Estimate, Severity } from './protocol.js';
import { VIEW_LOG_LINE_CHARS, VIEW_LOG_LINES } from './recent-logs.js';

/**
 * A view's status as the snapshot spells it. The status vocabulary is the record's (BuildState:
 * queued, running, cancelling, then the final ones); a view snapshot writes `cancelling` as
 * "stopping", the word it has always had on the wire (SSE `reset`, `GET /api/builds/{id}/view`,
 * farm records in Redis), so readers of version-1 views see no change. build-view.ts converts at
 * snapshot() and fromSnapshot(), the only two places the wire word appears.
 */
export const ViewStatus = z.enum(['queued', 'running', 'stopping', 'succeeded', 'cancelled', 'failed', 'crashed']);
export type ViewStatus = z.infer<typeof ViewStatus>;

const Instance = z.object({
  id: z.number(),
  nbSteps: z.number(),
  stepsDone: z.number(),
  startT: z.number(),
  endT: z.number().optional(),
  early: z.boolean().optional(),
});
const Spans = z.object({ start: z.array(z.number()), end: z.array(z.number()), count: z.array(z.number()), gap: z.number() });

/** What crosses process boundaries (SSE `reset`, the view endpoint, IPC); validated there. */
export const BuildViewSnapshot = z.object({
  v: z.literal(VIEW_VERSION),
  buildId: z.string(),
  /** Highest event seq folded in; the stream continues after it. */
  seq: z.number().int(),
  status: ViewStatus,
  lastT: z.number(),
  lastCallbackT: z.number().optional(),
  work: z.number(),
  fraction: z.number().min(0).max(1),
  /**
   * Where the percentage stands inside the open phases (build-view.ts, treeFraction): per open
   * phase id, [id, step, share of that step already spent, the child spending it now, that
   * child's share, the child's progress when last seen, the step's start and width on the bar].
   */
  progress: z
    .array(z.tuple([z.number().int(), z.number().int(), z.number(), z.number().int(), z.number(), z.number(), z.number(), z.number()]))
    .max(4096)
    .optional(),
  started: BuildStartedEvent.optional(),
  cache: CacheStats.optional(),
  outcome: BuildFinishedEvent.optional(),
  cancelling: z.object({ t: z.number(), reason: CancelReason }).optional(),
  estimate: Estimate.extend({ t: z.number() }).optional(),
  cpu: z
    .array(z.tuple([z.number(), z.number()]))
    .max(2)
    .optional(),
  gpu: z.object({ t: z.number(), percent: z.number().min(0).max(100) }).optional(),
  gpuNote: z.string().max(1000).optional(),
  gpuDetail: z
    .object({
      memoryBytes: z.number().optional(),
      clockMhz: z.number().optional(),
      temperatureC: z.number().optional(),
      memorySource: z.enum(['process', 'device-delta']).optional(),
      memoryUnknown: z.string().max(1000).optional(),
    })
    .optional(),
  memory: BuildMemory.extend({
    timeline: z.array(z.tuple([z.number(), z.number(), z.number().nullable()])).max(MEMORY_TIMELINE_POINTS + 1),
  }).optional(),
  logs: z
    .array(z.object({ seq: z.number().int(), t: z.number(), severity: Severity, message: z.string().max(VIEW_LOG_LINE_CHARS) }))
    .max(VIEW_LOG_LINES)
    .optional(),
  logsDropped: z.number().int().nonnegative().optional(),
  rows: z.object({
    rows: z.array(
      z.object({
        name: z.string(),
        parent: z.number().int(),
        count: z.number().int(),
        earlyCount: z.number().int(),
        shown: Instance,
        firstStartT: z.number(),
        spans: Spans,
      }),
    ),
    open: z.array(
      z.object({
        id: z.number(),
        row: z.number().int(),
        parentId: z.number().nullable(),
        nbSteps: z.number(),
        stepsDone: z.number(),
        startT: z.number(),
        activity: z.number(),
      }),
    ),
    recent: z.array(z.tuple([z.number(), z.number().int()])),
    phaseEvents: z.number(),
    finishedCallbacks: z.number(),
    lastT: z.number(),
    tick: z.number(),
  }),
});
export type BuildViewSnapshot = z.infer<typeof BuildViewSnapshot>;
