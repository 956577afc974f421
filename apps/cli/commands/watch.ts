// `watch [--json] [--studio <url> | --no-studio] [-v] -- <program> [args…]`: runs the program
// unchanged and makes every TensorRT engine build inside it (and inside its children) a build of
// its own, shown like `build` shows one: a live tree on a terminal, plain lines when piped,
// NDJSON with --json (the program's stdout then goes to stderr, so stdout carries only events).
// docs/watch.md is the contract between the pieces.
//
// How: a private folder with a Unix socket (TBS_WATCH_SOCKET) that the probes inside the program
// connect to: the Python hook (python/watch_hook/sitecustomize.py, put first on PYTHONPATH) and
// the native shim (build/native/libtbs_watch.so, put in LD_PRELOAD when it was built). Each
// probe build becomes a WatchedSession of a local BuildService, followed into a renderer as
// `build` follows its build. When a studio is running (published in the registry folder,
// apps/service/studio-registry.ts) each probe connection is relayed to it as well.
//
// Signals: the program runs in its own process group, so a terminal's Ctrl-C reaches watch only.
// The first asks every probe to cancel (the build ends at TensorRT's next step, the program gets
// TensorRT's cancel result and goes on its way); with no build open, and for every later signal,
// the signal is passed to the program's process group. watch exits with the program's code (a
// signal n: 128 + n).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processSignals } from '../../process/process-signals.js';
import { createBuildService } from '../../service/build-service.js';
import { findStudios, type StudioEntry } from '../../service/studio-registry.js';
import { ProbeRelay } from '../../service/watched/probe-relay.js';
import { ProbeSink } from '../../service/watched/probe-sink.js';
import { WatchedSession } from '../../service/watched/watched-session.js';
import { displayText } from '../../shared/display-text.js';
import { UsageError } from '../../shared/usage-error.js';
import { followIntoRenderer } from '../render/follow.js';
import type { BuildRenderer } from '../render/renderer.js';

export const WATCH_USAGE = `Usage: trt-build-studio watch [options] -- <program> [args…]

Runs the program unchanged and shows every TensorRT engine build inside it (and its child
processes) live: Python programs through a sitecustomize hook, native ones (trtexec, C++,
ONNX Runtime) through an LD_PRELOAD shim. Exits with the program's exit code.

Options:
  --json            NDJSON events on stdout (the program's stdout goes to stderr)
  --studio URL      show the builds only in the studio running at URL (a serve, found in the
                    registry); without it every running studio shows them (serve, the desktop
                    app, MCP and language servers)
  --no-studio       do not look for a running studio
  -v, --verbose     say how the program is watched
  -h, --help        this help

Ctrl-C cancels the build at its next step (the program gets TensorRT's cancel result and goes
on); a second Ctrl-C is passed to the program.`;

export interface WatchArgs {
  json: boolean;
  studio?: string;
  noStudio: boolean;
  verbose: boolean;
  help: boolean;
  command: string[];
}

export function parseWatchArgs(argv: readonly string[]): WatchArgs {
  const a: WatchArgs = { json: false, noStudio: false, verbose: false, help: false, command: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const w = argv[i];
    if (w === '--') {
      i++;
      break;
    }
    if (w === '--json') a.json = true;
    else if (w === '--no-studio') a.noStudio = true;
    else if (w === '-v' || w === '--verbose') a.verbose = true;
    else if (w === '-h' || w === '--help') a.help = true;
    else if (w === '--studio' || w.startsWith('--studio=')) {
      const v = w.includes('=') ? w.slice(w.indexOf('=') + 1) : argv[++i];
      if (!v) throw new UsageError('--studio needs the studio URL (http://127.0.0.1:PORT)');
      try {
        a.studio = new URL(v).origin;
      } catch {
        throw new UsageError(`--studio ${v}: not a URL (expected http://127.0.0.1:PORT)`);
      }
    } else if (w.startsWith('-')) throw new UsageError(`unknown option ${w}`);
    else break; // the program, without a `--`
  }
  a.command = argv.slice(i);
  if (a.studio && a.noStudio) throw new UsageError('--studio and --no-studio contradict each other');
  if (!a.help && a.command.length === 0) throw new UsageError('name the program to run: trt-build-studio watch -- <program> [args…]');
  return a;
}

/** The package's root folder (holding package.json), from sources or from dist/. */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && path.basename(dir) !== 'dist') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/** What the program's environment gets: the socket, the Python hook, the native shim when built. */
export function watchEnv(base: NodeJS.ProcessEnv, socketPath: string, root: string): { env: NodeJS.ProcessEnv; shim?: string; notes: string[] } {
  const env: NodeJS.ProcessEnv = { ...base, TBS_WATCH_SOCKET: socketPath };
  const notes: string[] = [];
  const hookDir = process.env.TBS_WATCH_PYTHON_HOOK_DIR ?? path.join(root, 'python', 'watch_hook');
  const pkgDir = path.join(root, 'python');
  // The hook first (its sitecustomize chains the program's own), then the drop-in package.
  env.PYTHONPATH = [hookDir, pkgDir, ...(base.PYTHONPATH ? [base.PYTHONPATH] : [])].join(path.delimiter);
  if (!fs.existsSync(path.join(hookDir, 'sitecustomize.py'))) notes.push(`the Python hook is missing (${hookDir}/sitecustomize.py): Python programs are not watched`);
  const shim = process.env.TBS_WATCH_SHIM ?? path.join(root, 'build', 'native', 'libtbs_watch.so');
  if (fs.existsSync(shim)) {
    env.LD_PRELOAD = base.LD_PRELOAD ? `${shim} ${base.LD_PRELOAD}` : shim;
    return { env, shim, notes };
  }
  notes.push(`the native shim was not built (${shim}): native programs (trtexec, C++, ONNX Runtime) are not watched`);
  return { env, notes };
}

function signalNumber(sig: NodeJS.Signals | null): number {
  return sig ? (os.constants.signals[sig] ?? 0) : 0;
}

export async function runWatch(argv: string[]): Promise<number> {
  const signals = processSignals();
  const args = parseWatchArgs(argv);
  if (args.help) {
    process.stdout.write(`${WATCH_USAGE}\n`);
    return 0;
  }
  const note = (m: string) => process.stderr.write(`trt-build-studio watch: ${displayText(m)}\n`);
  // The socket's folder is the access control: 0700, this user's own (mkdtemp makes it so).
  // A Unix socket path has room for about 100 bytes: a long TMPDIR falls back to /tmp.
  const dir = fs.mkdtempSync(path.join(os.tmpdir().length > 80 ? '/tmp' : os.tmpdir(), 'tbs-watch-'));
  const socketPath = path.join(dir, 'probe.sock');
  const service = createBuildService({ retainEvents: 1000, profiles: null });

  // The studios, found now and again whenever a relay has lost its own (a restarted studio).
  // Without --studio every live studio gets the builds (fan-out: an agent's MCP server, an editor's
  // language server and the desktop app all show them); --studio picks the one with that URL.
  let studioRefusalsSaid = false;
  const liveStudios = (): StudioEntry[] => {
    if (args.noStudio) return [];
    const found = findStudios();
    if (!studioRefusalsSaid) for (const r of found.refused) note(`studio registry: ${r}`);
    studioRefusalsSaid = true;
    return args.studio ? found.studios.filter((e) => e.url !== undefined && new URL(e.url).origin === args.studio).slice(0, 1) : found.studios;
  };
  const firstStudios = liveStudios();
  if (args.studio && !firstStudios.length) note(`no studio at ${args.studio} is published on this machine; watching here only`);
  else if (firstStudios.length && (args.verbose || args.json))
    note(`builds are shown in the studio${firstStudios.length > 1 ? 's' : ''} too (${firstStudios.map((e) => `${e.kind} ${e.probeSocket}`).join(', ')})`);
  /**
   * One relay per studio for each probe connection. A relay keeps to its studio while that one is
   * published; once it is gone the relay takes the newest live studio no sibling relay serves (a
   * restarted studio), so a restart is followed as before and no studio gets a build twice.
   */
  const relayTargets = (): Array<() => string | undefined> => {
    const taken = new Map<number, string>();
    const target = (slot: number, want?: StudioEntry) => {
      if (want) taken.set(slot, want.probeSocket);
      return () => {
        const live = liveStudios();
        const mine = taken.get(slot);
        if (mine && live.some((e) => e.probeSocket === mine)) return mine;
        const others = new Set([...taken].filter(([k]) => k !== slot).map(([, v]) => v));
        const next = live.find((e) => !others.has(e.probeSocket));
        if (next) taken.set(slot, next.probeSocket);
        else taken.delete(slot);
        return next?.probeSocket;
      };
    };
    const now = liveStudios();
    // No studio now: one relay keeps looking (a studio started later gets the build), unless --studio named one that is not there.
    if (!now.length) return args.studio && !firstStudios.length ? [] : [target(0)];
    return now.map((e, i) => target(i, e));
  };

  const rendering = new Set<Promise<void>>();
  let builds = 0;
  // A terminal shows one live tree at a time: builds that overlap are shown one after the other
  // (each from its first event: the service keeps them), so two trees never fight over the screen.
  // Plain lines and NDJSON show builds as they come (each line names its build).
  const tty = !args.json && process.stdout.isTTY === true;
  let ttyTurn: Promise<void> = Promise.resolve();
  const show = async (s: WatchedSession): Promise<void> => {
    const r = makeRenderer(args.json);
    // A live tree hides the cursor: a hard exit (the signal after the ending) must show it again.
    const restoreCursor = () => (r as { dispose?: () => void }).dispose?.();
    process.on('exit', restoreCursor);
    r.begin(s.record());
    const live = followIntoRenderer(service, s.id, r);
    const finished = await s.waitForResult();
    for (let room = r.backpressure?.(); room && !live.finished; room = r.backpressure?.()) await room;
    await new Promise((res) => setImmediate(res));
    live.unsubscribe();
    live.end(finished);
    r.end(finished);
    await (r.flushed?.() ?? Promise.resolve());
    process.off('exit', restoreCursor);
  };
  const render = (s: WatchedSession): void => {
    builds++;
    const done = tty ? (ttyTurn = ttyTurn.then(() => show(s))) : show(s);
    rendering.add(done);
  };

  const sink = new ProbeSink({
    host: service,
    makeSession: (id, hello, begin, sendCancel) => new WatchedSession(id, hello, begin, { retainEvents: 1000, sendCancel }),
    onBuild: (s) => render(s),
    onWarning: (m) => note(m),
    onConnection: (conn) => {
      if (args.noStudio) return;
      // Stop in any studio: the local session cancels (the probe gets its line once, the terminal
      // shows the build cancelling); the same Stop from a second studio finds it cancelling already
      // and sends nothing more.
      const onCancel = (build: number | '*') => {
        if (build === '*') {
          const open = [...conn.builds.values()].filter((s) => !s.finished);
          const fresh = open.filter((s) => s.cancel('user', { send: false }));
          if (fresh.length || !open.length) conn.cancel('*');
        } else if (!conn.builds.has(build)) conn.cancel(build);
        else conn.builds.get(build)!.cancel('user');
      };
      for (const findSocket of relayTargets()) new ProbeRelay(conn, { findSocket, onNote: note, onCancel });
    },
  });
  try {
    await sink.listen(socketPath);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    note(`cannot listen on ${socketPath}: ${(e as Error).message}`);
    return 1;
  }

  const { env, notes } = watchEnv(process.env, socketPath, packageRoot());
  if (args.verbose || args.json) for (const n of notes) note(n);

  let child: ChildProcess;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child = spawn(args.command[0], args.command.slice(1), {
      env,
      // --json: stdout is the events' alone; the program's stdout joins its stderr.
      stdio: ['inherit', args.json ? 2 : 'inherit', 'inherit'],
      // Its own process group: Ctrl-C at the terminal reaches watch, which turns it into a cancel.
      detached: true,
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const toProgram = (sig: NodeJS.Signals) => {
    const pid = child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        // Already gone.
      }
    }
  };
  signals.onHardExit(() => toProgram('SIGKILL'));
  let cancelled = false;
  signals.listen((sig) => {
    if (!cancelled && sink.openBuilds().length > 0) {
      cancelled = true;
      note(`${sig}: cancelling the build at its next step (again to pass ${sig} to the program)`);
      sink.cancelAll();
      return;
    }
    toProgram(sig);
  });

  let result: { code: number | null; signal: NodeJS.Signals | null };
  try {
    result = await exited;
  } catch (e) {
    note(`cannot run ${args.command[0]}: ${(e as Error).message}`);
    await sink.close();
    fs.rmSync(dir, { recursive: true, force: true });
    return 127;
  }
  // The program is gone; a child it left behind may still be building. Wait for the probes'
  // connections to close (each closes with its process), a little while only for the rest.
  const deadline = Date.now() + 2000;
  while (sink.connections.size > 0 && (sink.openBuilds().length > 0 || Date.now() < deadline)) await new Promise((r) => setTimeout(r, 50));
  await sink.close();
  await Promise.all(rendering);
  fs.rmSync(dir, { recursive: true, force: true });
  if (builds === 0) note(`${args.command[0]} built no TensorRT engine (no probe reported a build)`);
  const code = result.code ?? 128 + signalNumber(result.signal);
  signals.exitOnSignal(code);
  return code;
}

function makeRenderer(json: boolean): BuildRenderer {
  if (json) {
    const { JsonRenderer } = require('../render/json-renderer.js') as typeof import('../render/json-renderer.js');
    return new JsonRenderer(process.stdout);
  }
  if (process.stdout.isTTY) {
    const { TtyRenderer } = require('../render/tty-renderer.js') as typeof import('../render/tty-renderer.js');
    return new TtyRenderer();
  }
  const { PlainRenderer } = require('../render/plain-renderer.js') as typeof import('../render/plain-renderer.js');
  return new PlainRenderer();
}
