// React access to the store and the controller.
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './store/app-store.js';
import type { Controller } from './store/controller.js';

export const AppContext = createContext<{ store: AppStore; controller: Controller } | null>(null);

function useCtx() {
  const ctx = useContext(AppContext);
  if (!ctx) throw new Error('AppContext missing');
  return ctx;
}

export function useApp<T>(select: (s: AppState) => T): T {
  return useStore(useCtx().store, select);
}

export function useController(): Controller {
  return useCtx().controller;
}
