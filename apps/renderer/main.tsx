// Entry: the Electron preload provides window.trtBuildStudio; in a browser the page talks to the
// `serve` process that served it. Everything below depends only on the BuildClient interface.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { BuildClient } from '../shared/build-client.js';
import { App } from './App.js';
import { AppContext } from './hooks.js';
import { chooseClient } from './host-client.js';
import { createAppStore } from './store/app-store.js';
import { Controller } from './store/controller.js';
import { browserScheduler } from './store/event-pump.js';
import { WebBuildClient, type StreamWorker } from './web/web-client.js';

// The preload's client in the desktop app (its errors rebuilt on this side), the HTTP client in a
// browser, and on app:// without a preload an explicit error rather than a silent fallback.
// In the browser, build streams are read by a worker (web/event-stream.worker.ts) so that reading
// and framing 100k+ events a second stay off the thread that paints.
// (A Worker is a StreamWorker whose messages are typed; the DOM's types cannot say so.)
const streamWorker =
  typeof Worker === 'function'
    ? () => new Worker(new URL('./web/event-stream.worker.ts', import.meta.url), { type: 'module', name: 'event-stream' }) as unknown as StreamWorker
    : undefined;
const client: BuildClient = chooseClient(window, () => new WebBuildClient({ fetch: window.fetch.bind(window), document, streamWorker }));

const store = createAppStore();
const controller = new Controller(store, client, browserScheduler);

if (window.__TBS_PERF__) {
  const perf = {
    batches: [] as Array<[number, number]>,
    callbacks: () => store.getState().live?.phases.callbacks ?? 0,
    events: () => store.getState().live?.eventsApplied ?? 0,
  };
  window.__tbsPerf = perf;
  controller.probe = {
    painted(arrivals, counts, paintedAt) {
      for (let i = 0; i < arrivals.length; i++) perf.batches.push([paintedAt - arrivals[i], counts[i]]);
    },
  };
}

void controller.init();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AppContext.Provider value={{ store, controller }}>
      <App />
    </AppContext.Provider>
  </StrictMode>,
);
