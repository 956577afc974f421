// Keeps the computer from suspending while a build runs: a two-hour TensorRT build that the
// system's idle timer suspends halfway is lost time (and on resume the GPU context may be gone).
// 'prevent-app-suspension' holds off idle sleep but lets the screen blank, which is what a long
// unattended job wants. Held while at least one build runs, released when none is left.
export interface PowerSaveBlockerLike {
  start(type: 'prevent-app-suspension' | 'prevent-display-sleep'): number;
  stop(id: number): boolean;
  isStarted(id: number): boolean;
}

export class BuildSleepGuard {
  private id: number | null = null;

  constructor(
    private readonly blocker: PowerSaveBlockerLike,
    private readonly log?: (m: string) => void,
  ) {}

  /** Whether any build runs now; idempotent. */
  set(running: boolean): void {
    if (running && this.id === null) {
      try {
        this.id = this.blocker.start('prevent-app-suspension');
      } catch (e) {
        // Never a reason to fail a build: say so and go on.
        this.log?.(`could not hold off sleep during the build: ${(e as Error).message}`);
      }
    } else if (!running && this.id !== null) {
      if (this.blocker.isStarted(this.id)) this.blocker.stop(this.id);
      this.id = null;
    }
  }

  get holding(): boolean {
    return this.id !== null;
  }
}
