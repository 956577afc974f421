// The "TensorRT Build" view: the last build's status, its phases grouped by name path (as the
// server's buildView snapshots send them), the timing-cache figures and the outcome.
import * as vscode from 'vscode';
import type { BuildView, PhaseRow } from '../../../apps/lsp/build-view-notification';

export type Node =
  | { kind: 'status'; view: BuildView }
  | { kind: 'phase'; row: PhaseRow; children: Node[] }
  | { kind: 'cache'; view: BuildView }
  | { kind: 'info'; label: string; description?: string };

export function formatMs(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** Rows (depth first, path per row) into nested nodes. */
export function phaseNodes(rows: readonly PhaseRow[]): Node[] {
  const roots: Node[] = [];
  const byKey = new Map<string, Extract<Node, { kind: 'phase' }>>();
  for (const row of rows) {
    const node = { kind: 'phase' as const, row, children: [] as Node[] };
    byKey.set(row.path.join('\u0000'), node);
    const parent = byKey.get(row.path.slice(0, -1).join('\u0000'));
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

export function cacheLine(view: BuildView): string | undefined {
  const c = view.cache;
  if (!c) return undefined;
  const parts = [`${c.entriesAfter} entries (+${c.added})`];
  if (c.hits !== undefined) parts.push(`${c.hits} hits`);
  if (c.misses !== undefined) parts.push(`${c.misses}${c.missesInferred ? ' (inferred)' : ''} misses`);
  parts.push(`${(c.bytes / 1024).toFixed(1)} KiB`);
  return parts.join(', ');
}

export class BuildTreeProvider implements vscode.TreeDataProvider<Node> {
  private view: BuildView | undefined;
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  update(view: BuildView): void {
    // Snapshots of an older build arriving late must not replace the current one.
    if (this.view && this.view.buildId !== view.buildId && this.view.outcome === undefined && view.outcome !== undefined) return;
    this.view = view;
    this.changed.fire(undefined);
  }

  get current(): BuildView | undefined {
    return this.view;
  }

  getChildren(node?: Node): Node[] {
    if (node) return node.kind === 'phase' ? node.children : [];
    const v = this.view;
    if (!v) return [{ kind: 'info', label: 'No build yet', description: 'right-click an .onnx file › Build Engine' }];
    const out: Node[] = [{ kind: 'status', view: v }];
    if (v.cache) out.push({ kind: 'cache', view: v });
    if (v.outcome?.outputPath) out.push({ kind: 'info', label: 'Engine', description: v.outcome.outputPath });
    return [...out, ...phaseNodes(v.rows)];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'status': {
        const v = node.view;
        const name = v.modelPath.split(/[\\/]/).pop() ?? v.modelPath;
        const item = new vscode.TreeItem(`${name}: ${v.outcome?.status ?? v.state} ${v.percentage}%`, vscode.TreeItemCollapsibleState.None);
        const since = v.sinceLastCallbackMs === undefined ? '' : ` · last TensorRT callback ${formatMs(v.sinceLastCallbackMs)} ago`;
        item.description = `${formatMs(v.elapsedMs)}${v.outcome ? '' : since}${v.simulated ? ' · simulated' : ''}`;
        item.tooltip = v.message;
        item.iconPath = new vscode.ThemeIcon(v.outcome ? (v.outcome.status === 'succeeded' ? 'pass' : 'error') : 'sync~spin');
        return item;
      }
      case 'cache': {
        const item = new vscode.TreeItem('Timing cache', vscode.TreeItemCollapsibleState.None);
        item.description = cacheLine(node.view);
        item.tooltip = [node.view.cache?.path, node.view.cache?.warning].filter(Boolean).join('\n') || undefined;
        item.iconPath = new vscode.ThemeIcon(node.view.cache?.warning ? 'warning' : 'database');
        return item;
      }
      case 'phase': {
        const r = node.row;
        const item = new vscode.TreeItem(
          r.path[r.path.length - 1],
          node.children.length ? (r.open > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed) : vscode.TreeItemCollapsibleState.None,
        );
        const steps = r.instances === 1 && r.nbSteps > 1 ? `${Math.min(r.stepsDone, r.nbSteps)}/${r.nbSteps} · ` : '';
        const count = r.instances > 1 ? `×${r.instances} · ` : '';
        item.description = `${steps}${count}${formatMs(r.spanMs)}`;
        item.iconPath = new vscode.ThemeIcon(r.open > 0 ? 'loading~spin' : 'check');
        return item;
      }
      case 'info': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.description = node.description;
        return item;
      }
    }
  }
}
