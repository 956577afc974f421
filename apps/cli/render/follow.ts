// How the build command follows its build into a renderer: from the build's first event, through
// the shared live view (apps/shared/live-view.ts), which folds each event once and hands the
// renderer the view. Its own file so the contract test (test/contract/surfaces.contract.test.ts)
// drives exactly the path `build` takes.
import type { BuildView } from '../../shared/build-view.js';
import { followBuild, type FollowSource, type LiveView, type LiveViewHandlers } from '../../shared/live-view.js';
import type { BuildEvent } from '../../shared/protocol.js';
import type { BuildRenderer } from './renderer.js';

/** A renderer as the follower of a live view. */
export function rendererHandlers(r: BuildRenderer): LiveViewHandlers {
  return {
    onReset: (view) => r.restart(view),
    ...(r.event ? { onEvent: (e: BuildEvent, view: BuildView) => r.event!(e, view) } : {}),
    onEvents: (events, view) => r.events(events, view),
  };
}

/**
 * Subscribes the renderer to build `id` from its first event (afterSeq -1): the service replays
 * whatever arrived before subscribing, so nothing is missed, and the renderer starts empty
 * (begin), so a fresh subscription needs no snapshot. Were the first events no longer kept (a
 * reset), the renderer goes on from the view the subscription carries. The renderer's
 * back-pressure (a --json reader that is behind) holds the worker's next batch (pacesBuild);
 * after a cancel the worker stops pacing, and the rest of the stream (the user is stopping) may
 * wait here unbounded rather than be cut.
 */
export function followIntoRenderer(service: FollowSource, id: string, r: BuildRenderer): LiveView {
  return followBuild(service, id, rendererHandlers(r), {
    fromStart: true,
    fold: r.readsView !== false,
    backpressure: () => r.backpressure?.(),
    pacesBuild: true,
    maxBacklog: Number.MAX_SAFE_INTEGER,
    maxBacklogBytes: Number.MAX_SAFE_INTEGER,
  });
}
