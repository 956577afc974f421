// No import loops under apps/: a module that (through any chain) imports itself is a knot that
// makes both ends change together and leaves load order to chance. Type-only imports count too:
// they tie the two modules' meaning together just the same. Relative imports are followed
// (x.js → x.ts/x.tsx/x/index.ts); packages and Node modules end the walk.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSourceFiles, importsOf } from './support/source-imports.js';

const ROOT = path.resolve(__dirname, '..');
const APPS = path.join(ROOT, 'apps');

/** The file a relative specifier names, as TypeScript resolves it here; null when none. */
export function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, path.join(base, 'index.ts')]) {
    if (/\.(ts|tsx|mts|cts)$/.test(candidate) && existsSync(candidate)) return candidate;
  }
  return null;
}

/** Every import loop in a graph, each once, as the files around it (first file repeated at the end). */
export function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const loop = stack.slice(stack.indexOf(next));
        // One report per loop, whichever file the walk entered it by.
        const key = [...loop].sort().join('|');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...loop, next]);
        }
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(readFileSync(file, 'utf8'))
      .map((spec) => resolveImport(file, spec))
      .filter((t): t is string => t !== null && t.startsWith(APPS + path.sep) && !/[\\/]test[\\/]/.test(t));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

describe('import loops', () => {
  it('there are none under apps/', () => {
    const cycles = findCycles(importGraph(appSourceFiles(APPS)));
    expect(cycles.map((c) => c.map((f) => path.relative(ROOT, f)).join(' → '))).toEqual([]);
  });
});

describe('the loop finder itself', () => {
  const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

  it('finds a loop of two and of three, each once, and nothing in a tree', () => {
    expect(findCycles(g({ a: ['b'], b: ['a'] }))).toEqual([['a', 'b', 'a']]);
    expect(findCycles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c', 'a']]);
    expect(findCycles(g({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
    expect(findCycles(g({ a: ['a'] }))).toEqual([['a', 'a']]);
  });

  it('resolves .js specifiers to the TypeScript source', () => {
    const from = path.join(APPS, 'shared', 'protocol.ts');
    expect(resolveImport(from, './build-options.js')).toBe(path.join(APPS, 'shared', 'build-options.ts'));
    expect(resolveImport(from, 'zod')).toBeNull();
  });
});
