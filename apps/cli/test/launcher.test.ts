// The native launcher (native/launcher/launcher.cc, built as build/native/trt-build-studio): the
// command users run. Real launcher, real Node, real signals. Where a test needs Node to be killed
// before its first JavaScript line (deterministically, not by racing Node's start-up), `node` on
// PATH is a stand-in that never runs JavaScript (a shell script that execs `sleep`): the launcher
// cannot tell the difference, since all it sees is how its child ended.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { noBuildFinished } from '../commands/build.js';
import {
  collect,
  killLiveClis,
  LAUNCHER,
  REPO_ROOT,
  launcherStarted,
  leftoverMarked,
  parseNdjson,
  processesMarked,
  ProcessMarks,
  runCli,
  spawnLauncher,
} from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { until } from '../../../test/support/signal-storm.js';

let dir: string;
let model: string;
/** A folder whose only `node` never runs JavaScript: it dies the default way at any signal. */
let fakeNodeDir: string;
/** The same stand-in, in a process group of its own: a terminal's signals reach only the launcher. */
let ownGroupNodeDir: string;
/** util-linux `script`, by its path (a test's PATH may hold only a stand-in node). */
let scriptPath: string;
const marks = new ProcessMarks();

beforeAll(() => {
  dir = tempDir('tbs-launcher-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 6 });
  fakeNodeDir = path.join(dir, 'fake-node');
  fs.mkdirSync(fakeNodeDir);
  const sleep = spawnSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).stdout.trim();
  fs.writeFileSync(path.join(fakeNodeDir, 'node'), `#!/bin/sh\nexec ${sleep} 60\n`, { mode: 0o755 });
  scriptPath = spawnSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).stdout.trim();
  ownGroupNodeDir = path.join(dir, 'own-group-node');
  fs.mkdirSync(ownGroupNodeDir);
  const setsid = spawnSync('sh', ['-c', 'command -v setsid'], { encoding: 'utf8' }).stdout.trim();
  fs.writeFileSync(path.join(ownGroupNodeDir, 'node'), `#!/bin/sh\nexec ${setsid} ${sleep} 60\n`, { mode: 0o755 });
});

/** Runs the launcher under a new pseudo-terminal (util-linux `script`), its stdout and stderr in files. */
function underTerminal(args: string[], env: NodeJS.ProcessEnv) {
  // `script` makes the launcher the pty's foreground process group and copies its own stdin to
  // the pty: a 0x03 byte written there is the line discipline's SIGINT (si_code SI_KERNEL) to
  // that group. The launcher's output goes to files (the pty would mix stdout and stderr).
  const out = path.join(dir, `tty-${Date.now()}.out`);
  const err = `${out}.err`;
  const cmd = `exec '${LAUNCHER}' ${args.map((a) => `'${a}'`).join(' ')} >'${out}' 2>'${err}'`;
  const script = spawn(scriptPath, ['-q', '-e', '-c', cmd, '/dev/null'], { stdio: ['pipe', 'ignore', 'pipe'], env });
  const exited = new Promise<[number | null, string | null]>((r) => script.once('exit', (c, s) => r([c, s])));
  return { script, out, err, exited, ctrlC: () => script.stdin!.write('\x03') };
}
afterEach(() => {
  killLiveClis();
  marks.killAll();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SIM = ['--backend', 'simulated', '--sim-seed', '5'];
const withFakeNode = () => ({ env: { ...process.env, PATH: fakeNodeDir } });

function buildArgs(name: string, extra: string[]): string[] {
  return ['build', model, '-o', path.join(dir, `${name}.engine`), ...SIM, ...extra];
}

/** The launcher's child (Node, or the stand-in), once it exists. */
async function childOf(pid: number): Promise<number> {
  let kids: string[] = [];
  await until(`a child of the launcher ${pid}`, () => {
    try {
      kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      kids = [];
    }
    return kids.length > 0;
  });
  return Number(kids[0]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^State:\s*Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

describe('launcher: the command users run', () => {
  it('is a statically linked executable where libc.a links (no dynamic loader before main)', () => {
    const elf = fs.readFileSync(LAUNCHER);
    expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    // A dynamically linked executable names its loader in a PT_INTERP segment ("ld-linux").
    const cache = fs.readFileSync(path.join(path.dirname(LAUNCHER), 'CMakeCache.txt'), 'utf8');
    if (/^TBS_STATIC_LINKS:INTERNAL=1$/m.test(cache)) expect(elf.includes('/ld-linux')).toBe(false);
  });

  it("passes Node's exit code and output through unchanged", async () => {
    for (const args of [['--version'], [], ['no-such-command'], ['inspect', model, '--json']]) {
      const viaLauncher = await collect(spawnLauncher(args));
      const direct = await runCli(args);
      expect({ ...viaLauncher, args }).toEqual({ ...direct, args });
    }
    const unknown = await collect(spawnLauncher(['no-such-command']));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "no-such-command"/);
  }, 60_000);

  it('says so when no node is on PATH (127, like env)', async () => {
    const r = await collect(spawnLauncher(['--version'], { env: { ...process.env, PATH: path.join(dir, 'nowhere') } }));
    expect(r.code).toBe(127);
    expect(r.stderr).toMatch(/cannot run node: .*is Node\.js on PATH/);
  });
});

describe("the CLI's entry in Node (bin/trt-build-studio.js)", () => {
  it('installs the one ProcessSignals the commands use, from its first line (not a stale copy in dist/)', () => {
    const bin = fs.readFileSync(path.join(REPO_ROOT, 'bin', 'trt-build-studio.js'), 'utf8');
    const early = /require\('\.\.\/(dist\/apps\/[^']+process-signals\.js)'\)\.processSignals\(\)/.exec(bin);
    expect(early, 'the first require of bin/trt-build-studio.js').not.toBeNull();
    // The module the commands import (apps/process/process-signals.ts), compiled: one instance.
    expect(early![1]).toBe('dist/apps/process/process-signals.js');
    expect(fs.existsSync(path.join(REPO_ROOT, 'apps', 'process', 'process-signals.ts'))).toBe(true);
  });
});

describe('launcher: Node killed before its first line', () => {
  it('build --json: a SIGINT writes the very line the CLI writes for "no build yet", exit 130', async () => {
    for (const wait of [0, 5, 60]) {
      const child = spawnLauncher(buildArgs(`fake-${wait}`, ['--json']), withFakeNode());
      const done = collect(child);
      await childOf(child.pid!);
      await new Promise((r) => setTimeout(r, wait));
      child.kill('SIGINT');
      const r = await done;
      expect({ code: r.code, signal: r.signal }).toEqual({ code: 130, signal: null });
      const [line, ...rest] = r.stdout.split('\n');
      expect(rest).toEqual(['']);
      const parsed = JSON.parse(line) as { durationMs: number };
      // The same bytes as the JavaScript side's line for the same duration (field order, t's form).
      expect(line).toBe(JSON.stringify(noBuildFinished(parsed.durationMs)));
      expect(parsed.durationMs).toBeGreaterThanOrEqual(wait);
    }
  }, 60_000);

  it('SIGTERM: 143, with the same line for trtexec --json and none without --json', async () => {
    const cases: [string[], boolean][] = [
      [['trtexec', `--onnx=${model}`, '--json'], true],
      [buildArgs('fake-term', []), false],
      [['inspect', model, '--json'], false],
    ];
    for (const [args, line] of cases) {
      const child = spawnLauncher(args, withFakeNode());
      const done = collect(child);
      await childOf(child.pid!);
      child.kill('SIGTERM');
      const r = await done;
      expect({ code: r.code, signal: r.signal, args }).toEqual({ code: 143, signal: null, args });
      if (line)
        expect(parseNdjson(r.stdout)).toEqual([{ v: 1, buildId: '', seq: 0, t: expect.any(Number), type: 'build.finished', status: 'cancelled', durationMs: expect.any(Number) }]);
      else expect(r.stdout).toBe('');
    }
  }, 60_000);

  it('another signal (SIGHUP): the launcher dies by the same signal', async () => {
    const child = spawnLauncher(['backends'], withFakeNode());
    const done = collect(child);
    await childOf(child.pid!);
    child.kill('SIGHUP');
    const r = await done;
    expect({ code: r.code, signal: r.signal }).toEqual({ code: null, signal: 'SIGHUP' });
  });

  it('real Node: a SIGINT right at the start of build --json ends with build.finished and 130 (5 runs)', async () => {
    let placeholders = 0;
    for (let i = 0; i < 5; i++) {
      const mark = marks.next();
      const child = spawnLauncher(buildArgs(`start-${i}`, ['--sim-duration', '5', '--json']), { env: { ...process.env, [mark]: '1' } });
      const done = collect(child);
      await launcherStarted(child);
      child.kill('SIGINT');
      const r = await done;
      expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
      const events = parseNdjson(r.stdout) as BuildEvent[];
      const last = events.at(-1) as { buildId: string; durationMs: number };
      expect(last).toMatchObject({ type: 'build.finished', status: 'cancelled' });
      // One signal never makes the CLI write the no-build line (that takes two): an empty id here
      // is the launcher's own line, Node having died before its first line.
      if (last.buildId === '') {
        placeholders++;
        expect(r.stdout).toBe(`${JSON.stringify(noBuildFinished(last.durationMs))}\n`);
      }
      expect(await leftoverMarked(mark)).toEqual([]);
    }
    // Node takes tens of ms to reach its first line; the signal came within a few of the start.
    expect(placeholders).toBeGreaterThan(0);
  }, 120_000);
});

describe('launcher: signals while the build runs', () => {
  /** A build --json through the launcher that has reached its first phase. */
  async function running(name: string, opts: { detached?: boolean } = {}) {
    const mark = marks.next();
    const child = spawnLauncher(buildArgs(name, ['--sim-duration', '20', '--json']), { env: { ...process.env, [mark]: '1' }, ...opts });
    const done = collect(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    await until('the first phase', () => out.includes('"phase.start"'));
    return { child, done, mark };
  }

  it('sent to the launcher: forwarded once (a clean cancel, 130)', async () => {
    const b = await running('forwarded');
    b.child.kill('SIGTERM');
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
    expect((parseNdjson(r.stdout) as BuildEvent[]).at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(r.stderr).toMatch(/SIGTERM: stopping the build/);
    expect(r.stderr).not.toMatch(/killing the build worker/);
    expect(await leftoverMarked(b.mark)).toEqual([]);
  }, 60_000);

  it("a terminal's Ctrl-C (to the whole foreground group, from the kernel): Node handles its own copy, 130", async () => {
    const mark = marks.next();
    const t = underTerminal(buildArgs('tty', ['--sim-duration', '20', '--json']), { ...process.env, [mark]: '1' });
    await until('the first phase', () => fs.existsSync(t.out) && fs.readFileSync(t.out, 'utf8').includes('"phase.start"'));
    t.ctrlC();
    const [code, signal] = await t.exited;
    t.script.stdin!.end();
    const stderr = fs.readFileSync(t.err, 'utf8');
    expect({ code, signal }, stderr).toEqual({ code: 130, signal: null });
    expect((parseNdjson(fs.readFileSync(t.out, 'utf8')) as BuildEvent[]).at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    expect(stderr).toMatch(/SIGINT: stopping the build/);
    expect(stderr).not.toMatch(/killing the build worker/);
    expect(await leftoverMarked(mark)).toEqual([]);
  }, 60_000);

  it("a terminal's signal is never forwarded (the child has its own copy); one sent to the launcher's pid is", async () => {
    // The stand-in leaves the launcher's process group (setsid), so the terminal's SIGINT reaches
    // the launcher alone: had the launcher forwarded it, the stand-in would die by it (exit 130).
    const t = underTerminal(buildArgs('tty-own-group', ['--json']), { ...process.env, PATH: ownGroupNodeDir, [marks.next()]: '1' });
    let launcher = 0;
    // Its process group, field 5 of /proc/<pid>/stat (counted after the command name's ')').
    const pgrp = (pid: number | string) => {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2];
    };
    await until('the launcher and its stand-in, in a group of its own', () => {
      const kids = fs.readFileSync(`/proc/${t.script.pid}/task/${t.script.pid}/children`, 'utf8').trim();
      launcher = Number(kids.split(/\s+/)[0] || 0);
      if (!launcher) return false;
      try {
        const standIn = fs.readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim();
        // Not as soon as `setsid sleep 60` runs (its cmdline names sleep already): until its
        // setsid() the stand-in is still in the terminal's foreground group, and a Ctrl-C then
        // kills it directly, forwarded or not (seen on a busy machine).
        return standIn !== '' && /sleep/.test(fs.readFileSync(`/proc/${standIn}/cmdline`, 'utf8')) && pgrp(standIn) !== pgrp(launcher);
      } catch {
        return false;
      }
    });
    t.ctrlC();
    await new Promise((r) => setTimeout(r, 1000));
    expect(alive(launcher), 'the launcher after the terminal SIGINT').toBe(true);
    const standIn = Number(fs.readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim());
    expect(alive(standIn), 'its child after the terminal SIGINT').toBe(true);
    process.kill(launcher, 'SIGTERM');
    const [code] = await t.exited;
    t.script.stdin!.end();
    // Forwarded: the stand-in died by SIGTERM, the launcher wrote the no-build line and exited 143.
    expect(code).toBe(143);
    expect(parseNdjson(fs.readFileSync(t.out, 'utf8'))).toEqual([
      { v: 1, buildId: '', seq: 0, t: expect.any(Number), type: 'build.finished', status: 'cancelled', durationMs: expect.any(Number) },
    ]);
  }, 60_000);

  it('a group kill sent by a process (kill -INT -PGID) reaches Node twice: the second-signal rule, still 130 and build.finished', async () => {
    const b = await running('group', { detached: true });
    process.kill(-b.child.pid!, 'SIGINT');
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 130, signal: null });
    const events = parseNdjson(r.stdout) as BuildEvent[];
    expect(events.at(-1)).toMatchObject({ type: 'build.finished', status: 'cancelled' });
    // Usually two requests (the kernel's and the launcher's copy); two SIGINTs pending at Node at
    // once are one (standard signals do not queue), so a busy machine may show only the first.
    expect(r.stderr).toMatch(/SIGINT: stopping the build/);
    expect(await leftoverMarked(b.mark)).toEqual([]);
  }, 60_000);

  it('Node killed by SIGKILL: the launcher dies by SIGKILL too', async () => {
    const b = await running('node-killed');
    const node = await childOf(b.child.pid!);
    process.kill(node, 'SIGKILL');
    const r = await b.done;
    expect({ code: r.code, signal: r.signal }).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await leftoverMarked(b.mark, 10_000)).toEqual([]);
  }, 60_000);

  it('the launcher SIGKILLed: Node gets SIGTERM (PR_SET_PDEATHSIG), cancels and leaves nothing behind', async () => {
    const b = await running('launcher-killed');
    const node = await childOf(b.child.pid!);
    const before = processesMarked(b.mark);
    expect(before.length).toBeGreaterThanOrEqual(3); // launcher, Node, the build worker
    b.child.kill('SIGKILL');
    await b.done;
    await until('Node gone', () => !alive(node), 15_000);
    expect(await leftoverMarked(b.mark, 10_000)).toEqual([]);
  }, 60_000);
});
