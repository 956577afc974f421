import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The preload as one CommonJS file. Electron runs a sandboxed preload with a require that knows
// only 'electron' and a few builtins, so everything else it imports (the channel names in
// ipc-channel-names.ts, which imports nothing) is bundled in. apps/main/test/preload.test.ts runs
// the result with that restricted require.
export default defineConfig({
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/main', import.meta.url)),
    // dist/apps/main holds the rest of main (tsc's output): write one file, delete nothing.
    emptyOutDir: false,
    copyPublicDir: false,
    lib: {
      entry: fileURLToPath(new URL('./preload.cts', import.meta.url)),
      formats: ['cjs'],
      fileName: () => 'preload.cjs',
    },
    target: 'es2022',
    minify: false,
    // Replaces tsc's map of the unbundled file, which would point a preload error at the wrong line.
    sourcemap: true,
    reportCompressedSize: false,
    rolldownOptions: {
      external: ['electron'],
    },
  },
});
