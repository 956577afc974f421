// Which BuildClient the page uses, and the page's half of the Electron bridge.
//
// - In the desktop app the preload exposes window.trtBuildStudio. contextBridge copies an Error
//   as its message only (name and every other property are dropped), so the preload rejects
//   with a plain { tbsBridgeError, code, message } object, which crosses intact, and fromBridge
//   turns it back into an Error here, on the page's side, with the service's code as its name.
// - A page served from app:// without that object means the preload failed. Falling back to the
//   HTTP client there would only produce confusing network errors, so the page gets a client
//   that fails every call with what went wrong (the preload's own error when it could say it).
// - Anywhere else (a browser on `serve`), the HTTP client.
import type { BuildClient } from '../shared/build-client.js';

/** What the preload rejects with (the preload repeats this shape: it cannot import this file). */
export interface BridgeErrorShape {
  tbsBridgeError: true;
  code: string;
  message: string;
}

export class HostError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

function isBridgeError(e: unknown): e is BridgeErrorShape {
  return typeof e === 'object' && e !== null && (e as BridgeErrorShape).tbsBridgeError === true && typeof (e as BridgeErrorShape).message === 'string';
}

/** Any rejection value from the bridge as an Error the UI can show. */
export function rebuildError(e: unknown): Error {
  if (isBridgeError(e)) return new HostError(e.code, e.message);
  return e instanceof Error ? e : new Error(String(e));
}

/** The bridged client with its errors rebuilt on this side. */
export function fromBridge(raw: BuildClient): BuildClient {
  const wrapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'function') {
      wrapped[key] = value;
      continue;
    }
    wrapped[key] = (...args: unknown[]) => {
      const result = (value as (...a: unknown[]) => unknown)(...args);
      return result instanceof Promise ? result.catch((e: unknown) => Promise.reject(rebuildError(e))) : result;
    };
  }
  const subscribe: BuildClient['subscribe'] = (id, handlers) =>
    raw.subscribe(id, { ...handlers, onError: handlers.onError && ((e: unknown) => handlers.onError!(rebuildError(e))) });
  return { ...(wrapped as unknown as BuildClient), subscribe };
}

/** A client for a desktop page whose preload did not load: every call says so. */
export function unavailableClient(reason: string): BuildClient {
  const error = () => new HostError('preload_failed', reason);
  const fail = () => Promise.reject(error());
  return {
    capabilities: { host: 'electron', nativeDialogs: true, recentFiles: false },
    listBackends: fail,
    openModel: fail,
    openDroppedFile: fail,
    startBuild: fail,
    cancelBuild: fail,
    listBuilds: fail,
    subscribe(_id, handlers) {
      queueMicrotask(() => handlers.onError?.(error()));
      return () => undefined;
    },
    saveEngine: fail,
  };
}

export interface HostWindow {
  trtBuildStudio?: BuildClient;
  /** Set by the preload when it could not expose the client (its error message). */
  trtBuildStudioError?: unknown;
  location: { protocol: string };
}

export function chooseClient(win: HostWindow, webClient: () => BuildClient): BuildClient {
  if (win.trtBuildStudio) return fromBridge(win.trtBuildStudio);
  if (win.location.protocol === 'app:') {
    const detail = typeof win.trtBuildStudioError === 'string' ? `: ${win.trtBuildStudioError}` : '';
    return unavailableClient(
      `The desktop app could not connect this page to its build service (its preload script failed${detail}). ` +
        'Restart the app; if this persists, start it from a terminal to see the error.',
    );
  }
  return webClient();
}
