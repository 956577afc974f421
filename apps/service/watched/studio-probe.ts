// A studio (`serve`, the desktop app, the MCP and language servers) as a sink of watched builds: it listens on a probe socket
// in the private registry folder and publishes itself there (studio-registry.ts), so `watch` and
// the drop-in monitors find it without flags. Each probe build becomes a build of the studio's
// BuildService: listed, streamed, shown in every surface, and Stop sends the probe its cancel.
import { type StudioEntry, ensureRegistryDir, probeSocketPath, publishStudio, removeStaleSockets } from '../studio-registry.js';
import { ProbeSink, type WatchedBuildHost } from './probe-sink.js';
import { WatchedSession } from './watched-session.js';

export interface StudioProbe {
  probeSocket: string;
  registryFile: string;
  sink: ProbeSink;
  /** Unpublishes and stops listening; watched builds still open stay as their probes leave them. */
  close(): Promise<void>;
}

export interface StudioProbeOptions {
  /** serve's HTTP API; the desktop app has none. */
  url?: string;
  token?: string;
  kind: StudioEntry['kind'];
  onWarning?: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Events kept per watched build for replay (default 20 000, as serve keeps for its own). */
  retainEvents?: number;
}

/** Does this service take watched builds (a local BuildService does; a farm's does not)? */
export function takesWatchedBuilds(service: unknown): service is WatchedBuildHost {
  return typeof (service as Partial<WatchedBuildHost>)?.addWatchedBuild === 'function';
}

export async function startStudioProbe(service: WatchedBuildHost, opts: StudioProbeOptions): Promise<StudioProbe> {
  const dir = ensureRegistryDir(opts.env);
  const probeSocket = probeSocketPath(dir);
  removeStaleSockets(dir);
  const retainEvents = opts.retainEvents ?? 20_000;
  const sink = new ProbeSink({
    host: service,
    makeSession: (id, hello, begin, sendCancel) => new WatchedSession(id, hello, begin, { retainEvents, sendCancel }),
    onWarning: opts.onWarning,
  });
  await sink.listen(probeSocket);
  let published;
  try {
    published = publishStudio({ ...(opts.url ? { url: opts.url, token: opts.token } : {}), probeSocket, kind: opts.kind }, opts.env);
  } catch (e) {
    await sink.close();
    throw e;
  }
  const entry = published;
  return {
    probeSocket,
    registryFile: entry.file,
    sink,
    async close() {
      entry.remove();
      await sink.close();
    },
  };
}

/**
 * A surface without an HTTP API as a studio: the desktop app (apps/main/main.ts calls it once its
 * BuildService exists), the MCP server and the language server (their own in-process service, so
 * a watched build shows in list_builds / trtBuildStudio.listBuilds and their cancel reaches the
 * probe). A failure is a log line; the surface works on without it. A service that takes no
 * watched builds (a farm's) and TBS_NO_STUDIO=1 keep it out of the registry.
 */
export async function startSurfaceStudio(
  service: unknown,
  kind: 'desktop' | 'mcp' | 'lsp',
  log: (message: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StudioProbe | undefined> {
  if (!takesWatchedBuilds(service) || env.TBS_NO_STUDIO === '1') return undefined;
  try {
    const studio = await startStudioProbe(service, { kind, onWarning: log, env });
    log(`watched builds: probe socket ${studio.probeSocket} (published in ${studio.registryFile})`);
    return studio;
  } catch (e) {
    log(`not taking watched builds: ${(e as Error).message}`);
    return undefined;
  }
}

/** The desktop app's part: a studio with no HTTP API, published for the probes. */
export async function startDesktopStudio(service: WatchedBuildHost, log: (message: string) => void, env?: NodeJS.ProcessEnv): Promise<StudioProbe | undefined> {
  return startSurfaceStudio(service, 'desktop', log, env);
}
