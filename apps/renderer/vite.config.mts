import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));

// The same bundle is served by `serve` (http://127.0.0.1:PORT/) and loaded by Electron from
// file://, so asset URLs must be relative (base './').
export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    // No inline module-preload polyfill: the CSP forbids inline scripts.
    modulePreload: { polyfill: false },
    sourcemap: true,
    target: 'es2022',
  },
});
