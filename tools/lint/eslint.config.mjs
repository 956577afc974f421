// ESLint for the whole repository (flat config). The root's eslint.config.mjs re-exports this
// file so editors find it; it lives here so that its plugins resolve from tools/lint/node_modules
// (typescript-eslint needs the TypeScript 5 compiler API; the root's TypeScript 7 is native and
// has none). Run it with `npm run lint:eslint` from the repository root.
//
// What it checks:
// - typescript-eslint's `recommended` rules (syntax only, no type information: fast), with the few
//   rules below tuned to how this code base is written;
// - no import loops (import-x/no-cycle) — the same guarantee test/import-cycles.test.ts gives;
// - the rooms of apps/ and who may import whom (import-x/no-restricted-paths and
//   no-restricted-imports), the rules test/layering.test.ts checks by hand. The room table ROOMS
//   below is the one place to change when a room is added or a direction is allowed.
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/**
 * Each room of apps/ and the other rooms its (non-test) code may import. A room always imports
 * itself. Rooms not listed for a room are forbidden to it; a new room is one line here.
 * The farm is wired in only by the surfaces that start a build service (cli, mcp); nothing imports
 * apps/main or apps/renderer; apps/lsp is reached only through the cli's dispatch.
 */
export const ROOMS = {
  shared: [],
  // What every process entry needs from its own process (signals and exit, the event path's
  // priority): Node only, so the worker and the service share it without reaching into each other.
  process: [],
  worker: ['shared', 'process'],
  // Hosts import only the worker's contract, apps/worker/messages.ts (test/layering.test.ts checks
  // the file; this table the room).
  service: ['shared', 'worker', 'process'],
  farm: ['shared', 'worker', 'service', 'process'],
  // Code the editor and agent surfaces (MCP, LSP) share; it sits below both and imports neither.
  surface: ['shared', 'service', 'process'],
  // MCP and LSP are peers: neither imports the other.
  mcp: ['shared', 'worker', 'service', 'process', 'farm', 'surface'],
  lsp: ['shared', 'worker', 'service', 'process', 'surface', 'farm'],
  cli: ['shared', 'worker', 'service', 'process', 'farm', 'surface', 'mcp', 'lsp'],
  main: ['shared', 'worker', 'service'],
  renderer: ['shared'],
};

/** Only apps/worker loads the native addon: these files load it, and build/native holds it. */
const ADDON_LOADERS = ['apps/worker/addon.ts', 'apps/worker/load-addon.ts'];

/** Tests, test folders and build-tool configs reach across rooms to set things up. */
const TEST_AND_TOOL_FILES = ['**/*.test.ts', '**/*.test.tsx', '**/test/**', '**/*.config.mts', '**/*.vite.config.mts'];

const nodeBuiltins = [...builtinModules.filter((m) => !m.startsWith('_')), ...builtinModules.map((m) => `node:${m}`)];

/** The rooms' zones for import-x/no-restricted-paths: for each room, every room it may not import. */
function roomZones() {
  const zones = [];
  for (const [room, allowed] of Object.entries(ROOMS)) {
    const forbidden = Object.keys(ROOMS).filter((r) => r !== room && !allowed.includes(r));
    if (forbidden.length === 0) continue;
    zones.push({
      target: `./apps/${room}`,
      from: forbidden.map((r) => `./apps/${r}`),
      message: `apps/${room} may import only ${allowed.join(', ') || 'itself'} (ROOMS in tools/lint/eslint.config.mjs)`,
    });
  }
  zones.push({
    target: Object.keys(ROOMS).filter((r) => r !== 'worker').map((r) => `./apps/${r}`),
    from: [...ADDON_LOADERS.map((f) => `./${f}`), './build/native'],
    message: 'only apps/worker loads the native addon',
  });
  return zones;
}

const onlyMainImportsElectron = {
  paths: [{ name: 'electron', message: "only apps/main imports 'electron'" }],
  patterns: [{ group: ['electron/*'], message: "only apps/main imports 'electron'" }],
};

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      'dist/**',
      'build/**',
      'editors/vscode/dist/**',
      'test-results/**',
      'playwright-report/**',
      'e2e/artifacts/**',
      'tmp/**',
      // Written and removed by test/tooling/lint-config.test.ts (an import loop on purpose).
      'test/tooling/lint-cycle-fixture-*/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'import-x': importX },
    settings: {
      // Read TypeScript files when following imports (without these, import-x reads only .js and
      // no-cycle sees no loop through .ts files).
      'import-x/extensions': ['.ts', '.tsx', '.cts', '.mts', '.js', '.jsx', '.cjs', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx', '.cts', '.mts'] },
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: ['tsconfig.json', 'apps/renderer/tsconfig.json', 'editors/vscode/tsconfig.json'],
          noWarnOnMultipleProjects: true,
        }),
      ],
    },
    rules: {
      // Unused names are errors, except the `_`-prefixed ones the code uses to say "deliberately
      // unused" (callback parameters a signature requires, destructuring that drops a field).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The code strips and escapes control characters on purpose (terminal output, file names,
      // model text): a regular expression naming them is the point, not a slip.
      'no-control-regex': 'off',
    },
  },
  // Tests drive untyped protocols (JSON-RPC, a mocked VS Code host) and load built bundles.
  {
    files: TEST_AND_TOOL_FILES,
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  // The CLI loads its commands and renderers with require() when they are needed, so that
  // `--help` and a plain build do not load what they do not use (start-up time); the Electron
  // preload (.cts) is CommonJS by necessity.
  {
    files: ['apps/cli/**', '**/*.cts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Plain JavaScript (scripts/, bin/, bench/native.js, packaging/) is CommonJS run by Node.
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The renderer and the web client run in a browser; so do the page functions that Playwright
  // scripts evaluate.
  {
    files: ['apps/renderer/**', 'e2e/**', 'scripts/ui-tour.js'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  // React's rules of hooks, and the dependency lists of effects and memos.
  {
    files: ['apps/renderer/**/*.tsx', 'apps/renderer/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  // The rooms of apps/ (production code only: tests and tool configs are exempt, as in
  // test/layering.test.ts).
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'apps/**/*.cts', 'apps/**/*.mts'],
    ignores: TEST_AND_TOOL_FILES,
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: roomZones() }],
      'no-restricted-imports': ['error', onlyMainImportsElectron],
      'no-restricted-properties': ['error', { object: 'process', property: 'dlopen', message: 'only apps/worker loads the native addon' }],
    },
  },
  {
    files: ['apps/main/**'],
    ignores: TEST_AND_TOOL_FILES,
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['apps/worker/**'],
    ignores: TEST_AND_TOOL_FILES,
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['apps/shared/**'],
    ignores: TEST_AND_TOOL_FILES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'apps/shared imports no Node modules' })),
          patterns: [
            { group: ['react', 'react/*', 'react-dom', 'react-dom/*', 'zustand', 'zustand/*'], message: 'apps/shared imports no UI libraries' },
            { regex: '^(?!zod(/|$)|\\.|node:)', message: 'apps/shared depends on zod only' },
            { group: ['node:*'], message: 'apps/shared imports no Node modules' },
          ],
        },
      ],
    },
  },
  {
    files: ['apps/renderer/**'],
    ignores: TEST_AND_TOOL_FILES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...onlyMainImportsElectron,
          paths: [...onlyMainImportsElectron.paths, ...nodeBuiltins.map((name) => ({ name, message: 'apps/renderer never sees Node' }))],
          patterns: [...onlyMainImportsElectron.patterns, { group: ['node:*'], message: 'apps/renderer never sees Node' }],
        },
      ],
    },
  },
);
