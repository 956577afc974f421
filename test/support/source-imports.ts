// The source files under apps/ and the import specifiers in each, for the tests that check the
// shape of the code (test/layering.test.ts, test/import-cycles.test.ts). Test files, test folders
// and build-tool configs are left out: they legitimately reach across layers to set things up.
import { readdirSync } from 'node:fs';
import path from 'node:path';

const SOURCE = /\.(ts|tsx|cts|mts)$/;

/** Import specifiers of a TS source: static, dynamic, re-exports, require and import-equals. */
export function importsOf(source: string): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => line.replace(/(^|\s)\/\/.*$/, ''))
    .join('\n');
  const specs: string[] = [];
  const patterns = [
    /\bimport\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bexport\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) specs.push(m[1]);
  return specs;
}

/** Every source file under `dir`, tests and configs excepted. */
export function appSourceFiles(dir: string): string[] {
  return [...walk(dir)];
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'test' || entry.name === 'dist') continue;
      yield* walk(p);
    } else if (SOURCE.test(entry.name) && !/\.test\.|\.spec\.|\.config\.|\.d\.ts$/.test(entry.name)) {
      yield p;
    }
  }
}
