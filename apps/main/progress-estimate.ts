// A single 0..1 figure for the taskbar/dock bar, folded from the phase events. TensorRT gives no
// overall progress; the best honest estimate is the outermost phase's steps, refined by how far
// its currently open child has got (recursively). Phase names are never used: they change
// between TensorRT versions.
import type { BuildEvent } from '../shared/protocol.js';

interface Node {
  parentId: number | null;
  nbSteps: number;
  stepsDone: number;
  open: boolean;
  /** Most recently started open child. */
  activeChild: number | null;
}

export class ProgressEstimate {
  private readonly nodes = new Map<number, Node>();
  private root: number | null = null;
  private finished = false;

  apply(events: readonly BuildEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'phase.start': {
          this.nodes.set(e.id, { parentId: e.parentId, nbSteps: e.nbSteps, stepsDone: 0, open: true, activeChild: null });
          if (e.parentId === null) {
            if (this.root === null || !this.nodes.get(this.root)?.open) this.root = e.id;
          } else {
            const parent = this.nodes.get(e.parentId);
            if (parent) parent.activeChild = e.id;
          }
          break;
        }
        case 'phase.step': {
          const n = this.nodes.get(e.id);
          if (n) n.stepsDone = Math.max(n.stepsDone, e.stepsDone);
          break;
        }
        case 'phase.finish': {
          const n = this.nodes.get(e.id);
          if (!n) break;
          n.open = false;
          // Finished early still means done for the parent's purposes.
          n.stepsDone = n.nbSteps;
          if (n.parentId !== null) {
            const parent = this.nodes.get(n.parentId);
            if (parent && parent.activeChild === e.id) parent.activeChild = null;
          }
          // Children are forgotten once finished: a real build starts thousands of them.
          this.nodes.delete(e.id);
          if (this.root === e.id) this.root = null;
          break;
        }
        case 'build.finished':
          this.finished = true;
          break;
        default:
          break;
      }
    }
  }

  /** null before the first phase (the bar shows "indeterminate"), 1 when finished. */
  fraction(): number | null {
    if (this.finished) return 1;
    if (this.root === null) return null;
    return clamp(this.of(this.root, 0));
  }

  private of(id: number, depth: number): number {
    const n = this.nodes.get(id);
    if (!n || n.nbSteps <= 0) return 0;
    const child = depth < 32 && n.activeChild !== null ? this.of(n.activeChild, depth + 1) : 0;
    return Math.min(1, (Math.min(n.stepsDone, n.nbSteps) + child) / n.nbSteps);
  }
}

function clamp(x: number): number {
  return Math.max(0, Math.min(1, x));
}
