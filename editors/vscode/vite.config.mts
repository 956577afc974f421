// Bundles the extension and vscode-languageclient into one CommonJS file, so the .vsix needs no
// node_modules (vsce --no-dependencies) and packaging works offline. `vscode` is provided by the
// editor at run time; Node built-ins stay external.
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  logLevel: 'warn',
  // Resolve packages the way Node does (vscode-languageclient/node exists only under "node").
  resolve: { conditions: ['node', 'require', 'default'], mainFields: ['main'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'node20',
    minify: true,
    sourcemap: false,
    lib: {
      entry: 'src/extension.ts',
      formats: ['cjs'],
      fileName: () => 'extension.js',
    },
    rollupOptions: {
      external: ['vscode', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
    },
  },
});
