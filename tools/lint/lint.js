#!/usr/bin/env node
// The project's guards, each from tools/lint's own install (see tools/lint/README.md):
//   node tools/lint/lint.js                    ESLint, then the Prettier check, then the clang-format check;
//                                              each runs to its end, the exit code says if any failed
//   node tools/lint/lint.js eslint [args]      one of them: eslint | prettier | prettier-write |
//                                              clang-format | clang-format-write
// npm scripts: lint, lint:eslint, format, format:check, format:native, format:native:check.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(__dirname, 'node_modules', '.bin');

/** What Prettier formats: the TypeScript sources (.prettierignore leaves out what is built or installed). */
const PRETTIER_FILES = ['**/*.{ts,tsx,mts,cts}'];
/** Where the native sources are, and which of their files clang-format formats. */
const NATIVE_DIRS = ['native'];
const NATIVE_FILE = /\.(cc|cpp|h|hpp)$/;

/** The path of a tool of tools/lint's install, or a clear error saying how to install it. */
function tool(name) {
  const file = path.join(BIN, name);
  if (!fs.existsSync(file)) {
    throw new Error(`${path.relative(ROOT, file)} is missing: the lint tools are installed apart from the root's (run \`npm run lint:install\`, which \`npm ci\` also runs)`);
  }
  return file;
}

/** Every native source file, sorted, relative to the repository root. */
function nativeFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (NATIVE_FILE.test(e.name)) out.push(path.relative(ROOT, p));
    }
  };
  for (const d of NATIVE_DIRS) if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  return out.sort();
}

/** Runs one tool with its output on ours; true when it passed. */
function run(name, args) {
  const started = Date.now();
  const r = spawnSync(tool(name), args, { cwd: ROOT, stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ok = r.status === 0;
  console.log(`${ok ? '✓' : '✗'} ${name} ${args.filter((a) => a.startsWith('-')).join(' ')} (${seconds} s${ok ? '' : r.signal ? `, signal ${r.signal}` : `, exit code ${r.status}`})`);
  return ok;
}

const CHECKS = {
  // --cache: a second run reads only the files that changed (the cache lives in tools/lint/node_modules).
  eslint: (extra) => run('eslint', ['--cache', '--cache-location', path.join(__dirname, 'node_modules', '.cache', 'eslint') + path.sep, ...(extra.length ? extra : ['.'])]),
  prettier: (extra) => run('prettier', ['--check', ...(extra.length ? extra : PRETTIER_FILES)]),
  'prettier-write': (extra) => run('prettier', ['--write', '--log-level', 'warn', ...(extra.length ? extra : PRETTIER_FILES)]),
  'clang-format': (extra) => run('clang-format', ['--dry-run', '-Werror', ...(extra.length ? extra : nativeFiles())]),
  'clang-format-write': (extra) => run('clang-format', ['-i', ...(extra.length ? extra : nativeFiles())]),
};

function main(argv) {
  const [which, ...extra] = argv;
  try {
    if (which) {
      if (!CHECKS[which]) {
        console.error(`unknown check "${which}"; the checks are: ${Object.keys(CHECKS).join(', ')}`);
        return 2;
      }
      return CHECKS[which](extra) ? 0 : 1;
    }
    // Each to its end: a lint finding must not hide whether the formatting holds.
    const results = ['eslint', 'prettier', 'clang-format'].map((c) => CHECKS[c]([]));
    return results.every(Boolean) ? 0 : 1;
  } catch (e) {
    console.error(`lint: ${e.message}`);
    return 1;
  }
}

module.exports = { nativeFiles, PRETTIER_FILES };
if (require.main === module) process.exit(main(process.argv.slice(2)));
