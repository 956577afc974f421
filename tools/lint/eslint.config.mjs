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
//   no-restricted-imports), read from tools/rooms.json: the one place those rules are written,
//   which test/layering.test.ts reads too (and checks that ESLint and it agree).
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/** tools/rooms.json: the rooms, what each may import, and the package rules (read, not imported, so
 * that no import attribute or resolver is needed). */
const SPEC = JSON.parse(readFileSync(new URL('../rooms.json', import.meta.url), 'utf8'));
const ROOMS = Object.fromEntries(Object.entries(SPEC.rooms).map(([room, r]) => [room, r.mayImport]));

/** Tests, test folders and build-tool configs reach across rooms to set things up. */
const TEST_AND_TOOL_FILES = ['**/*.test.ts', '**/*.test.tsx', '**/test/**', '**/*.config.mts', '**/*.vite.config.mts'];

const nodeBuiltins = [...builtinModules.filter((m) => !m.startsWith('_')), ...builtinModules.map((m) => `node:${m}`)];
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The rooms' zones for import-x/no-restricted-paths: for each room, every room it may not import. */
function roomZones() {
  const zones = [];
  for (const [room, allowed] of Object.entries(ROOMS)) {
    const forbidden = Object.keys(ROOMS).filter((r) => r !== room && !allowed.includes(r));
    if (forbidden.length === 0) continue;
    zones.push({
      target: `./apps/${room}`,
      from: forbidden.map((r) => `./apps/${r}`),
      message: `apps/${room} may import only ${allowed.join(', ') || 'itself'} (tools/rooms.json)`,
    });
  }
  // A room that others reach only through its contract files (the worker's messages.ts).
  for (const [room, contract] of Object.entries(SPEC.contracts)) {
    for (const importer of Object.keys(ROOMS).filter((r) => r !== room && ROOMS[r].includes(room))) {
      zones.push({ target: `./apps/${importer}`, from: `./apps/${room}`, except: contract.files.map((f) => `./${f}`), message: contract.because });
    }
  }
  zones.push({
    target: Object.keys(ROOMS)
      .filter((r) => r !== SPEC.addon.room)
      .map((r) => `./apps/${r}`),
    from: [...SPEC.addon.loaders.map((f) => `./${f}`), ...SPEC.addon.folders.map((f) => `./${f}`)],
    message: SPEC.addon.because,
  });
  return zones;
}

/** no-restricted-imports for one room: Electron outside its room, and the room's package rules. */
function roomImportRules(room) {
  const r = SPEC.rooms[room];
  const paths = [];
  const patterns = [];
  if (room !== SPEC.electron.room) {
    paths.push({ name: 'electron', message: SPEC.electron.because });
    patterns.push({ group: ['electron/*'], message: SPEC.electron.because });
  }
  if (room !== SPEC.addon.room) {
    // What the zones cannot see: a .node file or the addon's folder named without resolving, and
    // the packages that find an addon.
    const folders = SPEC.addon.folders.map(escapeRegex).join('|');
    const packages = SPEC.addon.packages.map(escapeRegex).join('|');
    patterns.push({ regex: `(\\.node$|(^|/)(?:${folders})(/|$)|^(?:${packages})$)`, message: SPEC.addon.because });
  }
  if (r.noNode) {
    paths.push(...nodeBuiltins.map((name) => ({ name, message: r.noNode })));
    patterns.push({ group: ['node:*'], message: r.noNode });
  }
  if (r.noPackages) patterns.push({ group: r.noPackages.names.flatMap((n) => [n, `${n}/*`]), message: r.noPackages.because });
  if (r.packagesOnly) {
    const names = r.packagesOnly.names.map(escapeRegex).join('|');
    patterns.push({ regex: `^(?!(?:${names})(/|$)|\\.|node:)`, message: r.packagesOnly.because });
  }
  return paths.length + patterns.length ? ['error', { paths, patterns }] : 'off';
}

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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
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
  // test/layering.test.ts), from tools/rooms.json.
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'apps/**/*.cts', 'apps/**/*.mts'],
    ignores: TEST_AND_TOOL_FILES,
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: roomZones() }],
      'no-restricted-properties': ['error', { object: 'process', property: 'dlopen', message: SPEC.addon.because }],
    },
  },
  ...Object.keys(ROOMS).map((room) => ({
    files: [`apps/${room}/**`],
    ignores: TEST_AND_TOOL_FILES,
    rules: {
      'no-restricted-imports': roomImportRules(room),
      ...(room === SPEC.addon.room ? { 'no-restricted-properties': 'off' } : {}),
    },
  })),
);
