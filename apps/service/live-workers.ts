// The build workers a host has running, so that a host that must exit now (a second Ctrl-C, a
// signal after its work is done) can end them by PID first instead of leaving them to notice the
// closed IPC channel on their own. Wraps a launcher; the service uses it like any other.
import { childProcessLauncher, type WorkerChannel, type WorkerLauncher } from './worker-host.js';

export class LiveWorkers {
  private readonly live = new Set<WorkerChannel>();

  constructor(private readonly inner: WorkerLauncher = childProcessLauncher) {}

  readonly launcher: WorkerLauncher = () => {
    const ch = this.inner();
    this.live.add(ch);
    ch.onExit(() => this.live.delete(ch));
    return ch;
  };

  /** PIDs of the workers that have not exited (builds and backends queries alike). */
  pids(): number[] {
    return [...this.live].map((c) => c.pid).filter((p): p is number => p !== undefined);
  }

  /** SIGKILLs every live worker; their exits still reach the service (which cleans up after them). */
  killAll(): number[] {
    const pids = this.pids();
    for (const ch of this.live) ch.kill();
    return pids;
  }
}
