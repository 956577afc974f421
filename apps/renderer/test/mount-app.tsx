// The whole renderer (App, real store and controller) mounted in a happy-dom document against a
// given client and frame scheduler, as the component tests drive it.
import { act, StrictMode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { App } from '../App.js';
import { AppContext } from '../hooks.js';
import { createAppStore } from '../store/app-store.js';
import { Controller } from '../store/controller.js';
import type { FrameScheduler } from '../store/event-pump.js';
import type { ScriptedClient } from './scripted-client.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export interface MountedApp {
  host: HTMLElement;
  root: Root;
  controller: Controller;
  /** The app's store, to read what the page holds (the form, the model). */
  store: ReturnType<typeof createAppStore>;
  /** Unmounts, stops the controller and removes the host element. */
  unmount(): void;
}

export async function mountApp(client: ScriptedClient, sched: FrameScheduler): Promise<MountedApp> {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const store = createAppStore();
  const controller = new Controller(store, client, sched);
  const root = createRoot(host);
  await act(async () => {
    root.render(
      <StrictMode>
        <AppContext.Provider value={{ store, controller }}>
          <App />
        </AppContext.Provider>
      </StrictMode>,
    );
    await controller.init();
  });
  return {
    host,
    root,
    controller,
    store,
    unmount() {
      act(() => root.unmount());
      controller.dispose();
      host.remove();
    },
  };
}
