import type { BuildClient } from '../shared/build-client.js';

declare global {
  interface Window {
    /** Exposed by the Electron preload (contextBridge); absent in a plain browser. */
    trtBuildStudio?: BuildClient;
    /** Set by bench/ui.ts before the page loads, to collect event-to-paint samples. */
    __TBS_PERF__?: boolean;
    __tbsPerf?: { batches: Array<[latencyMs: number, events: number]>; callbacks(): number; events(): number };
  }
}

export {};
