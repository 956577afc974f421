// The phase tree as events describe it, rebuilt on the consuming side of the pipeline. The
// service keeps one per build (the snapshot late subscribers start from); the CLI and the
// renderer can keep their own from the same events. No Node/DOM imports: shared by all of them.
//
// A big build starts hundreds of thousands of phases, so keeping every one makes a long-running
// process grow without end. Owners that only need a snapshot (the service) pass
// `retainFinished`: open phases are always kept, and at most that many finished ones, the oldest
// finished leaves going first (the native snapshot makes the same trade, keeping its last
// 20,000). A parent is only evicted once none of its children are retained, so a retained phase's
// parent is always retained too. Without the option nothing is evicted.
import type { BuildEvent, PhaseNode } from './protocol.js';

export interface PhaseTreeOptions {
  /** Keep at most this many finished phases (oldest finished leaves evicted first). */
  retainFinished?: number;
}

export class PhaseTree {
  // Insertion order = start order, which is the order every surface shows siblings in.
  private readonly byId = new Map<number, PhaseNode>();
  // Sets, not arrays: eviction removes single children, which must not cost O(siblings).
  private readonly kids = new Map<number | null, Set<number>>();
  private open = 0;
  private readonly limit: number;
  /** Finished, retained ids in finish order; the head is the next eviction candidate. */
  private finishedQueue: number[] = [];
  private queueHead = 0;
  /** Finished phases popped while children were still retained: queued again when the last goes. */
  private readonly blocked = new Set<number>();
  private finishedRetained = 0;
  private evictedCount = 0;

  constructor(opts: PhaseTreeOptions = {}) {
    const r = opts.retainFinished;
    if (r !== undefined && !(Number.isInteger(r) && r >= 0)) {
      throw new RangeError(`retainFinished must be a non-negative integer, got ${r}`);
    }
    this.limit = r ?? Infinity;
  }

  static from(nodes: readonly PhaseNode[], opts?: PhaseTreeOptions): PhaseTree {
    const t = new PhaseTree(opts);
    for (const n of nodes) t.insert({ ...n });
    t.evict();
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
        this.markFinished(n.id);
        this.evict();
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
    return [...(this.kids.get(parentId) ?? [])].map((id) => this.byId.get(id)!);
  }

  get size(): number {
    return this.byId.size;
  }

  get openCount(): number {
    return this.open;
  }

  /** Finished phases dropped to stay within `retainFinished` (0 for an unbounded tree). */
  get evicted(): number {
    return this.evictedCount;
  }

  /** Sizes of the internal structures, for tests that check memory stays bounded. */
  internalSizes(): { nodes: number; parents: number; queue: number; queueArray: number; blocked: number } {
    return {
      nodes: this.byId.size,
      parents: this.kids.size,
      queue: this.finishedQueue.length - this.queueHead,
      queueArray: this.finishedQueue.length,
      blocked: this.blocked.size,
    };
  }

  /** Copies of every retained node, in start order (safe to hand out: later events do not mutate them). */
  snapshot(): PhaseNode[] {
    return [...this.byId.values()].map((n) => ({ ...n }));
  }

  private insert(n: PhaseNode): void {
    this.byId.set(n.id, n);
    const siblings = this.kids.get(n.parentId);
    if (siblings) siblings.add(n.id);
    else this.kids.set(n.parentId, new Set([n.id]));
    if (n.endT === undefined) this.open++;
    else this.markFinished(n.id);
  }

  private markFinished(id: number): void {
    if (this.limit === Infinity) return;
    this.finishedRetained++;
    this.finishedQueue.push(id);
  }

  private evict(): void {
    while (this.finishedRetained > this.limit && this.queueHead < this.finishedQueue.length) {
      const id = this.finishedQueue[this.queueHead++];
      if (this.kids.has(id)) {
        // Children normally finish (and so are evicted) before their parent; one still retained
        // (open, or finished later) keeps the parent until it goes, so no child is orphaned.
        this.blocked.add(id);
        continue;
      }
      this.remove(id);
    }
    // Compact the consumed head now and then, so the queue's array stays O(retained).
    if (this.queueHead > 1024 && this.queueHead * 2 > this.finishedQueue.length) {
      this.finishedQueue = this.finishedQueue.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  private remove(id: number): void {
    const n = this.byId.get(id)!;
    this.byId.delete(id);
    this.finishedRetained--;
    this.evictedCount++;
    const siblings = this.kids.get(n.parentId);
    if (!siblings) return;
    siblings.delete(id);
    if (siblings.size > 0) return;
    this.kids.delete(n.parentId);
    if (n.parentId !== null && this.blocked.delete(n.parentId)) this.finishedQueue.push(n.parentId);
  }
}
