// Command line of `trt-build-studio serve`. Kept apart from serve.ts so it can be tested without
// starting anything.
import * as net from 'node:net';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../../shared/usage-error.js';

export const DEFAULT_PORT = 8177;

export interface ServeArgs {
  port: number;
  host: string;
  token?: string;
  outputDir?: string;
  concurrency?: number;
  heartbeatMs?: number;
  keepBuildDetails?: number;
  /** Build farm: Redis URL; builds go to farm workers instead of running here. */
  queue?: string;
  /** Build farm: shared artifact folder (engines, timing caches, uploads). */
  artifacts?: string;
  /** Build farm: uploads older than this many days are removed from the artifact folder (0: never). */
  uploadRetentionDays?: number;
  /** Build farm: events kept per build in Redis (and in serve's replay mirror). */
  farmEventsPerBuild?: number;
  /** Build farm: builds kept in Redis's history. */
  farmHistory?: number;
  help: boolean;
}

export const SERVE_USAGE = `usage: trt-build-studio serve [--port N] [--host 127.0.0.1] [--token T] [--output-dir D] [--concurrency N] [--heartbeat-ms N]
                             [--keep-build-details N]
       [--queue redis://host:port [--artifacts DIR]]

  --port N          port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H          address to bind (default 127.0.0.1; anything else exposes the builds to the network)
  --token T         API token (default: a random one); letters, digits and . _ ~ + / = - only
  --output-dir D    where engines go when a build names no output path
  --concurrency N   builds running at once (default 1: concurrent builds on one GPU distort tactic timing)
  --heartbeat-ms N  SSE heartbeat comment interval (default 15000)
  --keep-build-details N
                    finished builds whose event log and phase tree are kept (default 20);
                    older ones keep their summary only
  --queue URL       build farm: queue builds in this Redis for \`trt-build-studio worker\` machines
  --artifacts DIR   build farm: shared artifact folder (same path on every machine); uploaded
                    models go to its uploads/ folder and stay there across serve restarts
  --upload-retention-days N
                    build farm: remove uploads older than N days (default 7; 0 keeps them)
  --farm-events-per-build N
                    build farm: events kept per build in Redis and for SSE replay (default
                    20000; Redis trims whole stream nodes, so a little more may stay); what a
                    resume from further back gets is the build's view, then live events
  --farm-history N  build farm: builds kept in Redis (default 1000; the oldest finished go
                    first, with their events). Redis memory is bounded by N × (record + events)

Prints the web UI's URL, with the token, on one line. Ctrl-C cancels running builds and stops.`;

export function parseServeArgs(argv: string[]): ServeArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
        'output-dir': { type: 'string' },
        concurrency: { type: 'string' },
        'heartbeat-ms': { type: 'string' },
        'keep-build-details': { type: 'string' },
        queue: { type: 'string' },
        artifacts: { type: 'string' },
        'upload-retention-days': { type: 'string' },
        'farm-events-per-build': { type: 'string' },
        'farm-history': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const port = values.port === undefined ? DEFAULT_PORT : integer('--port', values.port, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  if (host !== 'localhost' && net.isIP(host) === 0) {
    throw new UsageError(`--host: "${host}" is not an IP address (or "localhost")`);
  }
  if (values.token !== undefined && !/^[A-Za-z0-9._~+/=-]+$/.test(values.token)) {
    throw new UsageError('--token: use letters, digits and . _ ~ + / = - only (it travels in a header and a cookie)');
  }
  if (values.artifacts !== undefined && values.queue === undefined) throw new UsageError('--artifacts needs --queue (it is the shared folder of a build farm)');
  if (values['upload-retention-days'] !== undefined && values.artifacts === undefined) {
    throw new UsageError("--upload-retention-days needs --artifacts (it applies to the farm's uploads folder)");
  }
  for (const f of ['farm-events-per-build', 'farm-history'] as const) {
    if (values[f] !== undefined && values.queue === undefined) throw new UsageError(`--${f} needs --queue (it sizes the build farm's Redis)`);
  }
  return {
    port,
    host,
    token: values.token,
    outputDir: values['output-dir'] === undefined ? undefined : path.resolve(values['output-dir']),
    concurrency: values.concurrency === undefined ? undefined : integer('--concurrency', values.concurrency, 1, 64),
    heartbeatMs: values['heartbeat-ms'] === undefined ? undefined : integer('--heartbeat-ms', values['heartbeat-ms'], 10, 3_600_000),
    keepBuildDetails: values['keep-build-details'] === undefined ? undefined : integer('--keep-build-details', values['keep-build-details'], 0, 100_000),
    queue: values.queue,
    artifacts: values.artifacts === undefined ? undefined : path.resolve(values.artifacts),
    uploadRetentionDays: values['upload-retention-days'] === undefined ? undefined : integer('--upload-retention-days', values['upload-retention-days'], 0, 36_500),
    farmEventsPerBuild: values['farm-events-per-build'] === undefined ? undefined : integer('--farm-events-per-build', values['farm-events-per-build'], 100, 10_000_000),
    farmHistory: values['farm-history'] === undefined ? undefined : integer('--farm-history', values['farm-history'], 1, 1_000_000),
    help: values.help ?? false,
  };
}

function integer(flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag}: expected an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The URL printed at start; a wildcard bind is reachable locally at 127.0.0.1. */
export function uiUrl(host: string, port: number, token: string): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : net.isIPv6(host) ? `[${host}]` : host;
  return `http://${shown}:${port}/?token=${encodeURIComponent(token)}`;
}
