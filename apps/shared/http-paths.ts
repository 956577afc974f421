// The HTTP API's paths, written once: `serve` matches requests against them
// (apps/service/http/routes.ts) and the web client builds its requests from them
// (apps/renderer/web/web-client.ts). What each one answers is the service's description
// (build-service-api.ts) and docs/http-api.md; test/http-paths.test.ts checks that the server
// routes every path here, exactly once, and that the docs name each.
//
// A `:name` segment is one path segment of the caller's choosing (a build id): the client encodes
// it, the server captures and decodes it.

export const API_PATHS = {
  backends: '/api/backends',
  buildRoutes: '/api/backends/build-routes',
  models: '/api/models',
  builds: '/api/builds',
  build: '/api/builds/:id',
  buildEvents: '/api/builds/:id/events',
  buildView: '/api/builds/:id/view',
  buildCancel: '/api/builds/:id/cancel',
  buildLayers: '/api/builds/:id/layers',
  buildEngine: '/api/builds/:id/engine',
  buildManifest: '/api/builds/:id/manifest',
  compare: '/api/compare',
  engines: '/api/engines',
  enginesDelete: '/api/engines/delete',
  enginesCheck: '/api/engines/check',
  farm: '/api/farm',
  farmEvents: '/api/farm/events',
} as const;

export type ApiPathName = keyof typeof API_PATHS;

/** The `:name` parameters of a path template, as an object type ({} for none). */
type ParamsOf<T extends string> = T extends `${string}:${infer P}/${infer Rest}`
  ? { [K in P]: string } & ParamsOf<`/${Rest}`>
  : T extends `${string}:${infer P}`
    ? { [K in P]: string }
    : unknown;

export type ApiPathParams<N extends ApiPathName> = ParamsOf<(typeof API_PATHS)[N]>;

/**
 * The path of `name`, its parameters encoded into their segments and `query` (if any) appended.
 * A parameter the template names and `params` lacks is a programming error, thrown.
 */
export function apiPath<N extends ApiPathName>(name: N, params?: ApiPathParams<N>, query?: Record<string, string>): string {
  const given = (params ?? {}) as Record<string, string>;
  const path = API_PATHS[name].replace(/:([a-zA-Z]+)/g, (_, p: string) => {
    const v = given[p];
    if (v === undefined) throw new Error(`${name}: parameter "${p}" is missing`);
    return encodeURIComponent(v);
  });
  const q = query ? new URLSearchParams(query).toString() : '';
  return q ? `${path}?${q}` : path;
}

/** What the server matches a request's path against: each `:name` captures one segment. */
export function apiPattern(name: ApiPathName): RegExp {
  const escaped = API_PATHS[name].replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[a-zA-Z]+/g, '([^/]+)');
  return new RegExp(`^${escaped}$`);
}
