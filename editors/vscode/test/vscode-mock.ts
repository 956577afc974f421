// The part of the `vscode` API the extension uses, as a test double: UI calls are vi.fn()s the
// tests script (answers for input boxes and quick picks), and everything shown is recorded.
import { vi } from 'vitest';

export class EventEmitter<T> {
  private listeners: Array<(e: T) => void> = [];
  readonly event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}

export class TreeItem {
  description?: string;
  tooltip?: string;
  iconPath?: unknown;
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None,
  ) {}
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(p: string): Uri {
    return new Uri(p);
  }
  toString(): string {
    return `file://${this.fsPath}`;
  }
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class Memento {
  readonly data = new Map<string, unknown>();
  get<T>(key: string, fallback?: T): T | undefined {
    return this.data.has(key) ? (structuredClone(this.data.get(key)) as T) : fallback;
  }
  async update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, structuredClone(value));
  }
  keys(): readonly string[] {
    return [...this.data.keys()];
  }
}

/** One progress notification drawn by withProgress. */
export interface ShownProgress {
  options: { location: ProgressLocation; title?: string; cancellable?: boolean };
  reports: Array<{ message?: string; increment?: number }>;
  cancel(): void;
  done: boolean;
}

export const shown = {
  progress: [] as ShownProgress[],
  output: new Map<string, string[]>(),
  trees: new Map<string, any>(),
  commands: new Map<string, (...args: any[]) => unknown>(),
  config: new Map<string, unknown>(),
};

export const window = {
  showInputBox: vi.fn(),
  showQuickPick: vi.fn(),
  showOpenDialog: vi.fn(),
  showInformationMessage: vi.fn(async () => undefined),
  showErrorMessage: vi.fn(async () => undefined),
  createOutputChannel: vi.fn((name: string) => {
    const lines: string[] = [];
    shown.output.set(name, lines);
    return { appendLine: (l: string) => lines.push(l), dispose: () => {} };
  }),
  registerTreeDataProvider: vi.fn((id: string, provider: unknown) => {
    shown.trees.set(id, provider);
    return { dispose: () => {} };
  }),
  withProgress: vi.fn(async (options: ShownProgress['options'], task: (p: unknown, t: unknown) => Promise<unknown>) => {
    const cancelEmitter = new EventEmitter<void>();
    const entry: ShownProgress = { options, reports: [], cancel: () => cancelEmitter.fire(), done: false };
    shown.progress.push(entry);
    const r = await task(
      { report: (v: { message?: string; increment?: number }) => entry.reports.push(v) },
      { isCancellationRequested: false, onCancellationRequested: cancelEmitter.event },
    );
    entry.done = true;
    return r;
  }),
};

export const commands = {
  registerCommand: vi.fn((id: string, fn: (...args: any[]) => unknown) => {
    shown.commands.set(id, fn);
    return { dispose: () => shown.commands.delete(id) };
  }),
  executeCommand: vi.fn(async () => undefined),
};

export const workspace = {
  getConfiguration: vi.fn(() => ({ get: (key: string, fallback: unknown) => (shown.config.has(key) ? shown.config.get(key) : fallback) })),
};

export function reset(): void {
  shown.progress.length = 0;
  shown.output.clear();
  shown.trees.clear();
  shown.commands.clear();
  shown.config.clear();
  for (const f of [...Object.values(window), ...Object.values(commands), ...Object.values(workspace)]) (f as ReturnType<typeof vi.fn>).mockClear();
  window.showInputBox.mockReset();
  window.showQuickPick.mockReset();
  window.showOpenDialog.mockReset();
}
