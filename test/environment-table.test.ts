// Every TBS_* environment variable the code reads is in docs/environment.md's table, and the table
// lists no name that no code reads. "Reads", not mentions: a comment or a message that names a
// variable does not count; a read does (process.env.X, env['X'], getenv("X"), os.environ.get("X"),
// $ENV{X}, $X, and a string constant that is exactly the name, the way `KEEP_AWAKE_ENV =
// 'TBS_KEEP_AWAKE'` names one for process.env[KEEP_AWAKE_ENV]). On failure it prints the names
// each side lacks, with where the code reads them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');
const TABLE = path.join(ROOT, 'docs/environment.md');

/** Where code lives (the task's list); root files are matched by ROOT_FILES. */
const DIRS = ['apps', 'bin', 'scripts', 'native', 'python', 'bench', 'e2e', 'test', 'packaging', 'tools', '.ci', 'editors'];
const ROOT_FILES = /^(CMakeLists\.txt|.*\.cmake|.*\.config\.[cm]?[jt]s|.*\.config\.mts)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'build', 'out', '.git', 'test-results', 'playwright-report', 'artifacts', '__pycache__']);

type Lang = 'js' | 'c' | 'py' | 'cmake' | 'sh';

function langOf(file: string): Lang | null {
  const base = path.basename(file);
  if (/\.(ts|tsx|mts|cts|js|cjs|mjs)$/.test(base)) return 'js';
  if (/\.(c|cc|cpp|cxx|h|hh|hpp)$/.test(base)) return 'c';
  if (/\.py$/.test(base)) return 'py';
  if (base === 'CMakeLists.txt' || /\.cmake$/.test(base)) return 'cmake';
  if (/\.(sh|bash)$/.test(base)) return 'sh';
  if (!base.includes('.')) {
    // A script without an extension (.ci/run): a shell script if its first line says so.
    const head = readFileSync(file, 'utf8').slice(0, 100);
    if (/^#!.*\b(ba|z|da)?sh\b/.test(head)) return 'sh';
    if (/^#!.*\bnode\b/.test(head)) return 'js';
    if (/^#!.*\bpython/.test(head)) return 'py';
  }
  return null;
}

function* walk(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('lint-cycle-fixture-')) yield* walk(p);
    } else if (e.isFile() && statSync(p).size < 2_000_000) {
      yield p;
    }
  }
}

/** The code without its comments, so that a variable named in a comment is not a read. */
function stripComments(src: string, lang: Lang): string {
  if (lang === 'js' || lang === 'c') {
    // `//` only at a line's start or after a space: a URL in a string ('redis://x') stays.
    return src
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .split('\n')
      .map((l) => l.replace(/(^|\s)\/\/.*$/, ''))
      .join('\n');
  }
  return src
    .split('\n')
    .map((l) => l.replace(/(^|\s)#(?![{#]).*$/, '').replace(/^#(?!!).*$/, ''))
    .join('\n');
}

const NAME = 'TBS_[A-Z0-9_]*[A-Z0-9]';
const READS: Record<Lang, RegExp[]> = {
  js: [
    new RegExp(`\\bprocess\\.env\\.(${NAME})\\b`, 'g'),
    new RegExp(`\\b(?:process\\.)?env\\??\\.\\[?\\s*['"\`](${NAME})['"\`]`, 'g'),
    new RegExp(`\\benv\\??\\.(${NAME})\\b`, 'g'),
    new RegExp(`\\benv\\s*\\[\\s*['"\`](${NAME})['"\`]\\s*\\]`, 'g'),
    // A constant that is exactly the name: process.env[CONST], an env-reading helper's argument.
    new RegExp(`['"\`](${NAME})['"\`]`, 'g'),
  ],
  c: [new RegExp(`\\b(?:secure_)?getenv\\s*\\(\\s*"(${NAME})"`, 'g'), new RegExp(`"(${NAME})"`, 'g')],
  py: [
    new RegExp(`\\bos\\.environ\\.get\\s*\\(\\s*['"](${NAME})['"]`, 'g'),
    new RegExp(`\\bos\\.environ\\s*\\[\\s*['"](${NAME})['"]`, 'g'),
    new RegExp(`\\bos\\.getenv\\s*\\(\\s*['"](${NAME})['"]`, 'g'),
    new RegExp(`['"](${NAME})['"]\\s+in\\s+os\\.environ`, 'g'),
  ],
  cmake: [new RegExp(`\\$?ENV\\{(${NAME})\\}`, 'g')],
  sh: [new RegExp(`\\$\\{?(${NAME})\\b`, 'g')],
};

/** Each name the code reads, with the files that read it (relative, sorted). */
export function envReads(root = ROOT): Map<string, string[]> {
  const reads = new Map<string, Set<string>>();
  const files = [
    ...DIRS.flatMap((d) => [...walk(path.join(root, d))]),
    ...readdirSync(root)
      .filter((f) => ROOT_FILES.test(f))
      .map((f) => path.join(root, f)),
  ];
  for (const file of files) {
    const lang = langOf(file);
    if (!lang || file === __filename) continue; // this file's own examples are not reads
    const code = stripComments(readFileSync(file, 'utf8'), lang);
    if (!code.includes('TBS_')) continue;
    for (const name of readsIn(code, lang)) {
      if (!reads.has(name)) reads.set(name, new Set());
      reads.get(name)!.add(path.relative(root, file).split(path.sep).join('/'));
    }
  }
  return new Map([...reads].sort(([a], [b]) => a.localeCompare(b)).map(([n, f]) => [n, [...f].sort()]));
}

/** The names a piece of code (comments already stripped) reads. */
export function readsIn(code: string, lang: Lang): Set<string> {
  const names = new Set<string>();
  for (const re of READS[lang]) for (const m of code.matchAll(re)) names.add(m[1]);
  return names;
}

export interface TableRow {
  name: string;
  does: string;
  forWhom: string;
}

/** The rows of docs/environment.md's table: `| \`TBS_X\` | what it does | for whom |`. */
export function tableRows(md: string): TableRow[] {
  const rows: TableRow[] = [];
  for (const line of md.split('\n')) {
    const m = /^\|\s*`(TBS_[A-Z0-9_]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (!m) continue;
    const cells = m[2].split(/(?<!\\)\|/).map((c) => c.trim());
    rows.push({ name: m[1], does: cells[0] ?? '', forWhom: cells[1] ?? '' });
  }
  return rows;
}

const AUDIENCES = ['users', 'operators', 'developers', 'tests', 'internal'];
const TEST_ONLY = /^TBS_(TEST|E2E)_/;

describe('the scanner', () => {
  it('finds reads in each language and ignores mentions', () => {
    const js = stripComments(
      [
        'const a = process.env.TBS_A;',
        "const b = process.env['TBS_B'];",
        'const c = env.TBS_C ?? opts.env?.TBS_C2;',
        "const d = env['TBS_D'];",
        "export const KEEP_AWAKE_ENV = 'TBS_E';",
        '// process.env.TBS_COMMENT',
        "/* getenv('TBS_BLOCK') */",
        "throw new Error('TBS_MESSAGE must be a number');",
        "if (k.startsWith('TBS_PREFIX_')) {}",
      ].join('\n'),
      'js',
    );
    expect([...readsIn(js, 'js')].sort()).toEqual(['TBS_A', 'TBS_B', 'TBS_C', 'TBS_C2', 'TBS_D', 'TBS_E']);
    const c = stripComments('const char* p = std::getenv("TBS_F");\n// getenv("TBS_NOT")\nconst char* kName = "TBS_G";', 'c');
    expect([...readsIn(c, 'c')].sort()).toEqual(['TBS_F', 'TBS_G']);
    const py = stripComments('a = os.environ.get("TBS_H")\nb = os.environ["TBS_I"]\nc = os.getenv(\'TBS_J\')\n# os.getenv("TBS_NOT")', 'py');
    expect([...readsIn(py, 'py')].sort()).toEqual(['TBS_H', 'TBS_I', 'TBS_J']);
    const cmake = stripComments('if(DEFINED ENV{TBS_K})\n  set(x "$ENV{TBS_L}")\nendif()\n# $ENV{TBS_NOT}\nset(TBS_SRC x)', 'cmake');
    expect([...readsIn(cmake, 'cmake')].sort()).toEqual(['TBS_K', 'TBS_L']);
    const sh = stripComments('echo "$TBS_M ${TBS_N:-x}"\n# $TBS_NOT\nTBS_WRITE=1 node x', 'sh');
    expect([...readsIn(sh, 'sh')].sort()).toEqual(['TBS_M', 'TBS_N']);
  });

  it('reads the table', () => {
    expect(tableRows('| Name | Does | For |\n| --- | --- | --- |\n| `TBS_X` | does x \\| y | users |\n')).toEqual([{ name: 'TBS_X', does: 'does x \\| y', forWhom: 'users' }]);
  });
});

describe('docs/environment.md', () => {
  const reads = envReads();
  const rows = tableRows(readFileSync(TABLE, 'utf8'));
  const listed = new Set(rows.map((r) => r.name));

  it('finds the reads of the code', () => {
    // A scanner that finds nothing would pass everything below.
    for (const n of ['TBS_TRT_LIB_DIR', 'TBS_TEST_WORKERS']) expect([...reads.keys()]).toContain(n);
  });

  it('lists every TBS_* name the code reads', () => {
    const missing = [...reads].filter(([n]) => !listed.has(n)).map(([n, files]) => `${n}  (read in ${files.join(', ')})`);
    if (missing.length) console.error(`docs/environment.md lacks ${missing.length} name(s) the code reads:\n  ${missing.join('\n  ')}`);
    expect(missing, 'names the code reads that docs/environment.md lacks').toEqual([]);
  });

  it('lists no name that no code reads', () => {
    const stale = [...listed].filter((n) => !reads.has(n));
    expect(stale, 'names in docs/environment.md that no code reads').toEqual([]);
  });

  it('says for each what it does and who it is for, test-only ones marked', () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const r of rows) {
      if (seen.has(r.name)) problems.push(`${r.name}: listed twice`);
      seen.add(r.name);
      if (r.does.length < 10) problems.push(`${r.name}: says too little about what it does`);
      const who = r.forWhom.split(/[,;]\s*|\s+/).filter((w) => AUDIENCES.includes(w));
      if (who.length === 0) problems.push(`${r.name}: "For" must name one of ${AUDIENCES.join(', ')}, not "${r.forWhom}"`);
      if (TEST_ONLY.test(r.name) && !/test-only/.test(r.forWhom)) problems.push(`${r.name}: a TBS_TEST_/TBS_E2E_ name must be marked test-only`);
    }
    expect(problems).toEqual([]);
  });
});
