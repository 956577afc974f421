// The worker is the only process that loads the native addon (a crash in native code then takes
// down one build, not the app). Loaded lazily so a broken addon becomes an `error` message.
import type { NativeAddonApi } from './native-api.js';

export function loadAddon(): NativeAddonApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('./addon.js') as Record<string, unknown>;
  const candidates = [mod, mod.default, mod.addon, typeof mod.loadAddon === 'function' ? (mod.loadAddon as () => unknown)() : undefined];
  for (const c of candidates) {
    const api = c as Partial<NativeAddonApi> | undefined;
    if (api && typeof api.startBuild === 'function' && typeof api.listBackends === 'function') return api as NativeAddonApi;
  }
  throw new Error('apps/worker/addon.js does not expose listBackends/startBuild');
}
