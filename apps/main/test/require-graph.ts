// Walks what a packed app loads at run time: from its entry files, every require()/import of every
// reachable file, inside node_modules too, each resolved the way Node resolves it (package
// "exports", "main", index files, nested node_modules). A module that resolves outside the app
// folder, or not at all, is reported: in the shipped app it would be a "Cannot find module".
//
// Specifiers are found by pattern, not by parsing. Whole comment lines are skipped (JSDoc examples
// such as `require("./compiled.js")`); a require inside a string still counts, so callers list
// the few they accept as missing (optional dependencies behind try/catch).
import { readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';

export interface RequireGraph {
  /** Files reached, relative to the root, '/'-separated. */
  files: Set<string>;
  /** "<file> → <specifier>: <why>" for each one that did not resolve inside the root. */
  unresolved: string[];
}

const BUILTINS = new Set(builtinModules);
// require('x'), import … from 'x', import 'x', export … from 'x', import('x').
const PATTERNS = [
  /\brequire\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
  /\b(?:import|export)\s[^'";]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
  /\bimport\s*(['"])([^'"\n]+)\1/g,
  /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
];

/** Lines that are comments only: `// …`, `/* …`, ` * …` (not code that merely contains them). */
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*).*$/gm;

export function specifiersIn(code: string): string[] {
  const out = new Set<string>();
  const text = code.replace(COMMENT_LINE, '');
  for (const re of PATTERNS) for (const m of text.matchAll(re)) out.add(m[2]);
  return [...out];
}

function isBuiltin(spec: string): boolean {
  return spec.startsWith('node:') || BUILTINS.has(spec) || BUILTINS.has(spec.split('/')[0]);
}

/**
 * `accept(spec, from)` may return a reason to accept an unresolved specifier (an optional peer a
 * library probes for); `external` names modules the runtime provides (electron).
 */
export function walkRequires(root: string, entries: string[], opts: { external?: string[]; accept?: (spec: string, from: string) => string | null } = {}): RequireGraph {
  const rootAbs = path.resolve(root);
  const inside = (p: string) => p === rootAbs || p.startsWith(rootAbs + path.sep);
  const rel = (p: string) => path.relative(rootAbs, p).split(path.sep).join('/');
  const external = new Set(opts.external ?? []);
  const files = new Set<string>();
  const unresolved: string[] = [];
  const queue = entries.map((e) => path.resolve(rootAbs, e));

  while (queue.length) {
    const file = queue.pop()!;
    if (files.has(rel(file))) continue;
    files.add(rel(file));
    if (!/\.(c|m)?js$/.test(file)) continue;
    const code = readFileSync(file, 'utf8');
    const req = createRequire(file);
    for (const spec of specifiersIn(code)) {
      if (isBuiltin(spec) || external.has(spec)) continue;
      let target: string;
      try {
        target = req.resolve(spec);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // An ESM-only export map has no "require" entry; Node would load it through import.
        const viaImport = code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' ? resolveImportCondition(spec, file) : null;
        if (viaImport) target = viaImport;
        else {
          const why = opts.accept?.(spec, rel(file));
          if (!why) unresolved.push(`${rel(file)} → ${spec}: ${code ?? (err as Error).message}`);
          continue;
        }
      }
      if (isBuiltin(target)) continue;
      if (!inside(target)) {
        unresolved.push(`${rel(file)} → ${spec}: resolves outside the app (${target})`);
        continue;
      }
      queue.push(target);
    }
  }
  return { files, unresolved };
}

/** Resolves a bare specifier through its package's "exports" with the import condition. */
function resolveImportCondition(spec: string, from: string): string | null {
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  const sub = `.${spec.slice(name.length)}`;
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, 'node_modules', name);
    try {
      const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { exports?: unknown };
      const entry = pickExport(pkg.exports, sub);
      return entry ? path.join(pkgDir, entry) : null;
    } catch {
      // Not in this node_modules: keep walking up.
    }
    if (path.dirname(dir) === dir) return null;
  }
}

function pickExport(exportsField: unknown, sub: string): string | null {
  if (exportsField === null || exportsField === undefined) return null;
  const map =
    typeof exportsField === 'string' || Array.isArray(exportsField) || !Object.keys(exportsField as object).some((k) => k.startsWith('.'))
      ? { '.': exportsField }
      : (exportsField as Record<string, unknown>);
  const conditional = (v: unknown): string | null => {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.map(conditional).find((x) => x) ?? null;
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v))
        if (['import', 'node', 'default'].includes(k)) {
          const r = conditional(x);
          if (r) return r;
        }
    }
    return null;
  };
  if (sub in map) return conditional(map[sub]);
  for (const [k, v] of Object.entries(map)) {
    const star = k.indexOf('*');
    if (star < 0) continue;
    const [pre, post] = [k.slice(0, star), k.slice(star + 1)];
    if (sub.startsWith(pre) && sub.endsWith(post)) {
      const r = conditional(v);
      if (r) return r.replace('*', sub.slice(pre.length, sub.length - post.length));
    }
  }
  return null;
}
