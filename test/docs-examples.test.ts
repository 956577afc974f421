// The farm and editor pages' examples against the real thing (issue 37 item 5): each
// `trt-build-studio …` command in a code block of docs/farm.md and docs/ide.md runs through the
// real CLI (dist/) and must get past its argument parser to its work; each GPU label the pages show
// is in the form a worker publishes (probeLabels: the driver's name, spaces made "_"), and the
// targets the pages build at match a worker the pages start. A page once labelled a worker
// `gpu=L4` and targeted builds at `gpu=NVIDIA_L4`: copied together, the build stayed queued.
//
// What this machine allows: no Redis, no GPU, no TensorRT. The farm's Redis becomes a closed local
// port, so a command that parsed reaches "Redis … is unavailable; reconnecting…" (that line is the
// proof it parsed) and is then stopped; `--gpus all` sees device 0 through CUDA_VISIBLE_DEVICES.
// Whether a build then runs on a real farm is the farm tests' business (apps/farm/test).
import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { matches, parseLabels, probeLabels, type Labels } from '../apps/farm/labels.js';
import { REPO_ROOT, spawnCli } from './support/cli.js';

const PAGES = ['docs/farm.md', 'docs/ide.md'];
const read = (p: string) => fs.readFileSync(path.join(REPO_ROOT, p), 'utf8');

/** Shell lines of the page's fenced code blocks, continuations joined, comments dropped. */
function codeLines(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*```[^\n]*\n([\s\S]*?)^\s*```/gm)) {
    const joined = m[1].replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const l = line.trim();
      if (l !== '' && !l.startsWith('#')) out.push(l);
    }
  }
  return out;
}

/** `trt-build-studio <cmd> …` lines; `synopsis` when they show optional parts ([--x]) or placeholders. */
function documentedCommands(): { page: string; line: string; synopsis: boolean }[] {
  return PAGES.flatMap((page) =>
    codeLines(read(page))
      .filter((l) => /^trt-build-studio [a-z]/.test(l))
      .map((line) => ({ page, line, synopsis: /[[<…]|\.\.\./.test(line) })),
  );
}

/** The words a POSIX shell would pass: quotes removed, $VARS from `env`, a trailing `# …` dropped. */
function shellWords(line: string, env: Record<string, string>): string[] {
  const words: string[] = [];
  for (const m of line.replace(/\s+#.*$/, '').matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    const w = m[1] ?? m[2] ?? m[3];
    words.push(m[2] !== undefined ? w : w.replace(/\$([A-Z_]+)/g, (_, v: string) => env[v] ?? ''));
  }
  return words;
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-docs-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
const CLOSED_REDIS = 'redis://127.0.0.1:1';

/**
 * Runs a documented command with this machine's stand-ins (the page's Redis → a closed port, its
 * shared folder → a scratch one) until it either exits or says it is waiting for Redis.
 */
async function runUntilRedis(args: string[]): Promise<{ reachedRedis: boolean; code: number | null; stderr: string }> {
  const artifacts = path.join(scratch, 'builds');
  fs.mkdirSync(path.join(artifacts, 'models'), { recursive: true });
  fs.mkdirSync(path.join(artifacts, 'engines'), { recursive: true });
  const argv = args.map((a) => a.replace(/^redis:\/\/.*$/, CLOSED_REDIS).replace(/^\/mnt\/builds/, artifacts));
  const child: ChildProcess = spawnCli(argv, {
    cwd: scratch,
    env: { ...process.env, CUDA_VISIBLE_DEVICES: '0', TBS_STATE_DIR: path.join(scratch, 'state'), XDG_CACHE_HOME: path.join(scratch, 'cache') },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const reached = new Promise<true>((resolve) => {
    const check = () => /Redis at \S+ is unavailable/.test(stderr) && resolve(true);
    child.stderr!.on('data', check);
  });
  const first = await Promise.race([reached, exited.then(() => false as const), new Promise<'slow'>((r) => setTimeout(() => r('slow'), 45_000))]);
  if (first !== false) {
    // Ours, by PID: a clean stop first (worker and serve hand back and exit), then a kill.
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(t);
  }
  return { reachedRedis: first === true, code: child.exitCode, stderr };
}

describe('documented commands parse', () => {
  const commands = documentedCommands();

  it('the pages document commands (the extraction finds them)', () => {
    expect(commands.filter((c) => c.page === 'docs/farm.md' && !c.synopsis).length).toBeGreaterThanOrEqual(4);
    expect(commands.some((c) => c.page === 'docs/ide.md')).toBe(true);
  });

  for (const c of commands.filter((x) => !x.synopsis)) {
    it(`${c.page}: ${c.line}`, { timeout: 90_000 }, async () => {
      const args = shellWords(c.line, { TOKEN: 'docs-example-token' }).slice(1);
      const r = await runUntilRedis(args);
      expect(r.stderr, 'a usage error').not.toMatch(/for usage\.|^usage:|unknown option|unknown argument/m);
      expect(r.reachedRedis, `stopped before reaching the farm's Redis (exit ${r.code}):\n${r.stderr}`).toBe(true);
      // The line names the command that waits (a `build --queue` once said "serve").
      const line = /^.*Redis at \S+ is unavailable.*$/m.exec(r.stderr)![0];
      expect(line.startsWith(`trt-build-studio ${args[0]}`), line).toBe(true);
    });
  }

  // A synopsis ("trt-build-studio lsp [--stdio] [--output-dir <dir>] …") names flags: each must
  // be one the command's own --help lists (the help text is written from the parser's options).
  for (const c of commands.filter((x) => x.synopsis)) {
    it(`${c.page}: every flag of "${c.line.slice(0, 60)}…" is in the command's --help`, () => {
      const cmd = c.line.split(' ')[1];
      const help = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'trt-build-studio.js'), cmd, '--help'], { encoding: 'utf8', timeout: 30_000 });
      expect(help.status).toBe(0);
      const flags = [...c.line.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
      expect(flags.length).toBeGreaterThan(0);
      for (const f of flags) expect(`${help.stdout}${help.stderr}`, f).toContain(f);
    });
  }
});

/** Every GPU label value on the pages: `gpu=X` anywhere and `"gpu": "X"` in JSON examples. */
function gpuValues(text: string): string[] {
  const vals = [...text.matchAll(/(?<![\w-])gpu=([^\s,`"')…]+)/g), ...text.matchAll(/"gpu"\s*:\s*"([^"]+)"/g)].map((m) => m[1]);
  // Placeholders ("gpu=<name>", "gpu=...") are not examples.
  return vals.filter((v) => !/^[<.]/.test(v));
}

/** What a worker labels itself on a GPU the driver names `driverName`. */
const published = (driverName: string) => probeLabels([{ name: 'tensorrt', available: true, version: '10.16.0', gpu: { name: driverName } } as never]).gpu;

describe('documented labels are the labels workers publish', () => {
  it('probeLabels turns the driver name into the label value the pages use', () => {
    expect(published('NVIDIA L4')).toBe('NVIDIA_L4');
    expect(published('NVIDIA A100-SXM4-80GB')).toBe('NVIDIA_A100-SXM4-80GB');
  });

  for (const page of PAGES) {
    it(`${page}: every gpu label is a driver name as the probe writes it`, () => {
      const values = gpuValues(read(page));
      expect(values.length).toBeGreaterThan(0);
      for (const v of values) {
        // The driver's names start with the vendor or the product line ("NVIDIA L4", "Tesla
        // V100-SXM2-16GB"); a bare "L4" is never what a probing worker publishes.
        expect(v, `gpu=${v}`).toMatch(/^(NVIDIA|Tesla|Quadro)_/);
        expect(published(v.replace(/_/g, ' ')), `gpu=${v}`).toBe(v);
      }
    });
  }

  it('docs/farm.md: the targets its builds use match a worker the page starts', () => {
    const lines = codeLines(read('docs/farm.md'));
    const workers: Labels[] = lines.filter((l) => l.startsWith('trt-build-studio worker') && l.includes('--labels')).map((l) => parseLabels(/--labels (\S+)/.exec(l)![1]));
    // A worker started with --gpus all on an L4 machine labels itself from the probe.
    workers.push({ ...probeLabels([{ name: 'tensorrt', available: true, version: '10.16.0', library: { version: '10.16.0' }, gpu: { name: 'NVIDIA L4' } } as never]) });
    const targets: Labels[] = [
      ...lines.filter((l) => l.includes('--target ')).map((l) => parseLabels(/--target (\S+)/.exec(l)![1], '--target')),
      ...lines.flatMap((l) => [...l.matchAll(/"target":(\{[^}]*\})/g)].map((m) => JSON.parse(m[1]) as Labels)),
    ];
    expect(targets.length).toBeGreaterThanOrEqual(2);
    for (const t of targets)
      expect(
        workers.some((w) => matches(w, t)),
        JSON.stringify(t),
      ).toBe(true);
  });
});
