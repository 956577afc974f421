// A studio (`serve`, the desktop app) as a sink of watched builds: it listens on a probe socket
// in the private registry folder and publishes itself there (studio-registry.ts), so `watch` and
// the drop-in monitors find it without flags. Each probe build becomes a build of the studio's
// BuildService: listed, streamed, shown in every surface, and Stop sends the probe its cancel.
import { ensureRegistryDir, probeSocketPath, publishStudio, removeStaleSockets } from '../studio-registry.js';
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
  kind: 'serve' | 'desktop';
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
 * The desktop app's part (apps/main/main.ts calls it once its BuildService exists): a studio with
 * no HTTP API, published for the probes. A failure is a log line; the app works on without it.
 */
export async function startDesktopStudio(service: WatchedBuildHost, log: (message: string) => void, env?: NodeJS.ProcessEnv): Promise<StudioProbe | undefined> {
  try {
    const studio = await startStudioProbe(service, { kind: 'desktop', onWarning: log, env });
    log(`watched builds: probe socket ${studio.probeSocket}`);
    return studio;
  } catch (e) {
    log(`not taking watched builds: ${(e as Error).message}`);
    return undefined;
  }
}
