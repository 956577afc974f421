// Which engines the Engine view shows, apart from any component: the finished-build summary, the
// Engine panel and the view itself all open it. A build's layers come from the service (GET
// /api/builds/{id}/layers); files are read in the page (engine-view.ts), nothing uploaded.
import { createStore } from 'zustand/vanilla';
import type { BuildClient } from '../../shared/build-client.js';
import { LAYER_FILE_LIMITS } from '../../shared/engine-layers.js';
import { readLayerFiles, type EngineSource, type FileText } from './engine-view.js';

export type Slot = 'a' | 'b';

export interface EngineViewState {
  open: boolean;
  a: EngineSource | null;
  b: EngineSource | null;
  busy: boolean;
  error: string | null;
}

export const engineViewStore = createStore<EngineViewState>()(() => ({ open: false, a: null, b: null, busy: false, error: null }));

const set = (s: Partial<EngineViewState>) => engineViewStore.setState(s);

export function openEngineView(): void {
  set({ open: true });
}

export function closeEngineView(): void {
  set({ open: false });
}

export function clearSlot(slot: Slot): void {
  set(slot === 'a' ? { a: engineViewStore.getState().b, b: null, error: null } : { b: null, error: null });
}

/** Loads a build's layer information into a slot (and opens the view). */
export async function loadBuild(client: BuildClient, id: string, label: string, slot: Slot = 'a'): Promise<void> {
  if (!client.buildLayers) {
    set({ open: true, error: 'This host cannot read a build’s layer information: open its .layers.json file instead.' });
    return;
  }
  set({ open: true, busy: true, error: null });
  try {
    const r = await client.buildLayers(id);
    const { check, ...read } = r;
    set({ [slot]: { label, read, ...(check ? { check } : {}) }, busy: false });
  } catch (e) {
    set({ busy: false, error: `Build ${id}: ${(e as Error).message}` });
  }
}

/** Reads files the user picked or dropped (File API, in the page) into a slot. */
export async function loadFiles(files: readonly File[], slot: Slot = 'a'): Promise<void> {
  set({ open: true, busy: true, error: null });
  try {
    // Checked before reading: a huge file is refused by its size, not after the page read it all.
    const big = files.find((f) => f.size > LAYER_FILE_LIMITS.maxChars);
    if (big) throw new Error(`${big.name}: ${big.size} bytes, more than the ${LAYER_FILE_LIMITS.maxChars} the reader takes`);
    const texts: FileText[] = await Promise.all(files.map(async (f) => ({ name: f.name, text: await f.text() })));
    set({ [slot]: readLayerFiles(texts), busy: false });
  } catch (e) {
    set({ busy: false, error: (e as Error).message });
  }
}
