// UI state (zustand). The fast-changing build data lives in a LiveBuild outside this store;
// the store only carries `frame`, bumped when applied events are shown (at most ~30 times a
// second, see EventPump), which is what components subscribe to.
import { createStore } from 'zustand/vanilla';
import type { BuildClient, ModelRef } from '../../shared/build-client.js';
import type { KnobDatabase } from '../../shared/build-routes.js';
import type { BackendInfo, BackendName, BuildRecord } from '../../shared/protocol.js';
import { DEFAULT_FORM, type FormState } from '../lib/options-form.js';
import type { LiveBuild } from './live-build.js';

export interface TreeUi {
  /** Follow the active path: auto-expand it and keep it scrolled into view. */
  follow: boolean;
  /** Explicit user choices; rows not listed use the default (see isExpanded). */
  expanded: Record<string, boolean>;
  focusedKey: string | null;
}

export interface AppState {
  backends: BackendInfo[];
  backendsError: string | null;
  /**
   * The route picker's knob databases read from a library when asked (Controller.readBuildRoutes),
   * by backend; a listing that has its own (detail.buildRoutesJson) needs none.
   */
  routeKnobs: Partial<Record<BackendName, KnobDatabase>>;
  /** A read of build routes under way, or the reason the last one failed. */
  routeKnobsBusy: boolean;
  routeKnobsError: string | null;
  model: ModelRef | null;
  modelBusy: boolean;
  modelError: string | null;
  form: FormState;
  /**
   * Each model's form as it was left, by model identity (see Controller.modelKey), so reopening a
   * model in this session restores its options and shapes, and nothing carries over to another.
   */
  forms: Record<string, FormState>;
  formError: string | null;
  /** The build on screen (the current one, or one picked from history). */
  live: LiveBuild | null;
  /** True between pressing Build and the service answering with an id. */
  starting: boolean;
  /** Bumped when the pump notifies (≤ ~30 Hz under a stream), and by the clock while a build runs. */
  frame: number;
  history: BuildRecord[];
  /** Model paths → the names the user knows them by (browser uploads get server-side names). */
  modelNames: Record<string, string>;
  notice: { kind: 'info' | 'error'; text: string } | null;
  tree: TreeUi;
}

export const initialState = (): AppState => ({
  backends: [],
  backendsError: null,
  routeKnobs: {},
  routeKnobsBusy: false,
  routeKnobsError: null,
  model: null,
  modelBusy: false,
  modelError: null,
  form: DEFAULT_FORM,
  forms: {},
  formError: null,
  live: null,
  starting: false,
  frame: 0,
  history: [],
  modelNames: {},
  notice: null,
  tree: { follow: true, expanded: {}, focusedKey: null },
});

export type AppStore = ReturnType<typeof createAppStore>;

export function createAppStore() {
  return createStore<AppState>()(() => initialState());
}

export interface AppContext {
  store: AppStore;
  client: BuildClient;
}
