// Keeps a Linux machine from suspending while build workers run, for the headless surfaces
// (serve, the CLI, MCP, LSP): the desktop app uses Electron's powerSaveBlocker instead. Opt-in
// (`TBS_KEEP_AWAKE=1`, or the service's `keepAwake` option), since a server may have its own
// power policy. It holds a logind inhibitor lock through `systemd-inhibit` for as long as a
// worker is alive. The inhibitor's child is `cat` reading a pipe from us: if this process dies
// in any way, the pipe closes, cat exits and the lock is released, so no lock outlives us.
// Where systemd-inhibit is missing (no systemd, a container), it says so once and does nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import type { WorkerChannel, WorkerLauncher } from './worker-host.js';

export const KEEP_AWAKE_ENV = 'TBS_KEEP_AWAKE';

export interface SleepInhibitorOptions {
  /** The program (default systemd-inhibit, from PATH). */
  command?: string;
  log?(m: string): void;
}

export class SleepInhibitor {
  private child: ChildProcess | null = null;
  private disabled = false;

  constructor(private readonly opts: SleepInhibitorOptions = {}) {}

  /** Whether builds run now; idempotent. */
  set(running: boolean): void {
    if (running) this.hold();
    else this.release();
  }

  get holding(): boolean {
    return this.child !== null;
  }

  private hold(): void {
    if (this.child || this.disabled) return;
    const command = this.opts.command ?? 'systemd-inhibit';
    const args = ['--what=sleep:idle', '--who=TRT Build Studio', '--why=A TensorRT engine build is running', '--mode=block', 'cat'];
    let child: ChildProcess;
    try {
      child = spawn(command, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    } catch (e) {
      this.disable(`${command}: ${(e as Error).message}`);
      return;
    }
    this.child = child;
    child.on('error', (e) => {
      if (this.child === child) this.child = null;
      this.disable(`${command}: ${e.message}`);
    });
    child.on('exit', () => {
      if (this.child === child) this.child = null;
    });
    // Neither the pipe nor the child keeps the event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?(): void } | null)?.unref?.();
  }

  private release(): void {
    const child = this.child;
    if (!child) return;
    this.child = null;
    child.stdin?.end();
    child.kill('SIGTERM');
  }

  private disable(why: string): void {
    if (this.disabled) return;
    this.disabled = true;
    this.opts.log?.(`not keeping the machine awake during builds (${why})`);
  }
}

/** A launcher that holds `inhibitor` while at least one of its workers is alive. */
export function inhibitWhileWorkersRun(inner: WorkerLauncher, inhibitor: Pick<SleepInhibitor, 'set'>): WorkerLauncher {
  const live = new Set<WorkerChannel>();
  return () => {
    const ch = inner();
    live.add(ch);
    inhibitor.set(true);
    ch.onExit(() => {
      live.delete(ch);
      if (live.size === 0) inhibitor.set(false);
    });
    return ch;
  };
}
