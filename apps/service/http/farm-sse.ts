// GET /api/farm/events: the farm view as Server-Sent Events (apps/shared/farm-stream.ts): the
// status at connect, then each change, heartbeat comments, the end of the response at shutdown.
// Every message is a complete status, so a client that is not reading loses nothing by being
// skipped: while the socket has not taken the last message, newer ones wait and only the latest
// is written once it drains.
import type * as http from 'node:http';
import type { FarmStatus } from '../../shared/farm-status.js';
import { formatFarmMessage } from '../../shared/farm-stream.js';
import type { BuildServiceApi } from '../api.js';
import { ErrorResponse } from './errors.js';

export interface FarmStreamOptions {
  heartbeatMs: number;
  /** Enders of the streams still open; the server calls them on shutdown. */
  open: Set<() => void>;
}

export function openFarmStream(res: http.ServerResponse, service: BuildServiceApi, opts: FarmStreamOptions): void {
  if (!service.subscribeFarm) throw new ErrorResponse('not_found', 'this server runs builds itself, not on a build farm (start it with --queue)');
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.socket?.setNoDelay(true);
  let ended = false;
  let waiting: { status: FarmStatus; version: number } | undefined;
  const write = (status: FarmStatus, version: number) => {
    if (ended) return;
    if (res.writableNeedDrain) {
      waiting = { status, version };
      return;
    }
    res.write(formatFarmMessage(version, status));
  };
  const onDrain = () => {
    const w = waiting;
    waiting = undefined;
    if (w) write(w.status, w.version);
  };
  res.on('drain', onDrain);
  const unsubscribe = service.subscribeFarm(write);
  const heartbeat = setInterval(() => {
    if (!ended && !res.writableNeedDrain) res.write(': heartbeat\n\n');
  }, opts.heartbeatMs);
  const cleanup = () => {
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    res.off('drain', onDrain);
    opts.open.delete(finish);
  };
  const finish = () => {
    if (ended) return;
    cleanup();
    res.end();
  };
  opts.open.add(finish);
  res.on('close', cleanup);
  res.on('error', cleanup);
}
