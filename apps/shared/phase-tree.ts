// The phase tree as events describe it, rebuilt on the consuming side of the pipeline. The
// service keeps one per build (the snapshot late subscribers start from); the CLI and the
// renderer can keep their own from the same events. No Node/DOM imports: shared by all of them.
import type { BuildEvent, PhaseNode } from './protocol.js';

export class PhaseTree {
  // Insertion order = start order, which is the order every surface shows siblings in.
  private readonly byId = new Map<number, PhaseNode>();
  private readonly kids = new Map<number | null, number[]>();
  private open = 0;

  static from(nodes: readonly PhaseNode[]): PhaseTree {
    const t = new PhaseTree();
    for (const n of nodes) t.insert({ ...n });
    return t;
  }

  /** Applies one event; returns true when the tree changed. Non-phase events are ignored. */
  apply(ev: BuildEvent): boolean {
    switch (ev.type) {
      case 'phase.start': {
        if (this.byId.has(ev.id)) return false;
        this.insert({
          id: ev.id,
          parentId: ev.parentId,
          name: ev.name,
          nbSteps: ev.nbSteps,
          instance: ev.instance,
          stepsDone: 0,
          startT: ev.t,
        });
        return true;
      }
      case 'phase.step': {
        const n = this.byId.get(ev.id);
        // Coalesced transport may deliver only the latest step; never let a stale one go backwards.
        if (!n || n.endT !== undefined || ev.stepsDone <= n.stepsDone) return false;
        n.stepsDone = ev.stepsDone;
        return true;
      }
      case 'phase.finish': {
        const n = this.byId.get(ev.id);
        if (!n || n.endT !== undefined) return false;
        n.stepsDone = Math.max(n.stepsDone, ev.stepsDone);
        n.endT = ev.t;
        if (ev.early) n.early = true;
        this.open--;
        return true;
      }
      default:
        return false;
    }
  }

  get(id: number): PhaseNode | undefined {
    return this.byId.get(id);
  }

  /** Children of `parentId` (null = roots) in start order. */
  children(parentId: number | null): PhaseNode[] {
    return (this.kids.get(parentId) ?? []).map((id) => this.byId.get(id)!);
  }

  get size(): number {
    return this.byId.size;
  }

  get openCount(): number {
    return this.open;
  }

  /** Copies of every node, in start order (safe to hand out: later events do not mutate them). */
  snapshot(): PhaseNode[] {
    return [...this.byId.values()].map((n) => ({ ...n }));
  }

  private insert(n: PhaseNode): void {
    this.byId.set(n.id, n);
    const siblings = this.kids.get(n.parentId);
    if (siblings) siblings.push(n.id);
    else this.kids.set(n.parentId, [n.id]);
    if (n.endT === undefined) this.open++;
  }
}
