// A stand-in for the VS Code extension host, enough for the real vscode-languageclient to start a
// real server: the parts the extension and the client read are implemented (configuration,
// commands, progress, output, tree views, diagnostics); everything else the client only registers
// or subscribes to is an inert object that accepts any call.
import { EventEmitter, Memento, ProgressLocation, ThemeIcon, TreeItem, TreeItemCollapsibleState, Uri } from './vscode-mock';

/** Callable, constructible, any property: what the client touches but this test does not need. */
function inert(): any {
  const target = function () {};
  return new Proxy(target, {
    get: (t, k) => {
      if (k === 'prototype') return (t as any).prototype;
      if (k === 'then') return undefined; // not a thenable
      if (k === Symbol.iterator) return function* () {};
      if (k === Symbol.toPrimitive) return () => 0;
      return inert();
    },
    apply: () => inert(),
    construct: () => inert(),
  });
}

export interface HostRecord {
  commands: Map<string, (...args: any[]) => any>;
  progress: Array<{ options: any; reports: Array<{ message?: string; increment?: number }>; cancel(): void; done: boolean }>;
  output: Map<string, string[]>;
  trees: Map<string, any>;
  diagnostics: Map<string, any[]>;
  messages: string[];
}

export function makeHost(settings: Record<string, unknown>, answers: { inputBox(o: any): any; quickPick(items: any[]): any }) {
  const rec: HostRecord = { commands: new Map(), progress: [], output: new Map(), trees: new Map(), diagnostics: new Map(), messages: [] };
  const disposable = { dispose() {} };
  const event = () => disposable;
  const channel = (name: string) => {
    const lines: string[] = [];
    rec.output.set(name, lines);
    const write = (l: string) => lines.push(l);
    return new Proxy(
      {
        name,
        appendLine: write,
        append: write,
        info: write,
        warn: write,
        error: write,
        trace: write,
        debug: write,
        show() {},
        clear() {},
        dispose() {},
        logLevel: 2,
        onDidChangeLogLevel: event,
      },
      { get: (t: any, k) => (k in t ? t[k] : inert()) },
    );
  };
  const api: Record<string, any> = {
    EventEmitter,
    TreeItem,
    TreeItemCollapsibleState,
    ThemeIcon,
    ProgressLocation,
    version: '1.95.0',
    // Value classes the client builds diagnostics from.
    Position: class {
      constructor(
        readonly line: number,
        readonly character: number,
      ) {}
    },
    Range: class {
      constructor(
        readonly start: unknown,
        readonly end: unknown,
      ) {}
    },
    Diagnostic: class {
      source?: string;
      code?: unknown;
      constructor(
        readonly range: unknown,
        readonly message: string,
        readonly severity: number,
      ) {}
    },
    DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
    CancellationTokenSource: class {
      private readonly emitter = new EventEmitter<void>();
      readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
      cancel() {
        this.token.isCancellationRequested = true;
        this.emitter.fire();
      }
      dispose() {}
    },
    Uri: Object.assign(Uri, { parse: (s: string) => Uri.file(decodeURIComponent(s.replace(/^file:\/\//, ''))) }),
    Disposable: Object.assign(
      class {
        constructor(private readonly fn: () => void) {}
        dispose() {
          this.fn?.();
        }
      },
      { from: () => disposable },
    ),
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
    env: new Proxy({ language: 'en', appName: 'test host', machineId: 'test' }, { get: (t: any, k) => (k in t ? t[k] : inert()) }),
    workspace: new Proxy(
      {
        workspaceFolders: undefined,
        textDocuments: [],
        notebookDocuments: [],
        getConfiguration: (section?: string) => ({
          get: (key: string, fallback: unknown) => {
            const full = section ? `${section}.${key}` : key;
            return full in settings ? settings[full] : fallback;
          },
          has: () => false,
          inspect: () => undefined,
          update: async () => undefined,
        }),
      },
      { get: (t: any, k) => (k in t ? t[k] : typeof k === 'string' && k.startsWith('on') ? event : inert()) },
    ),
    window: new Proxy(
      {
        visibleTextEditors: [],
        activeTextEditor: undefined,
        tabGroups: { all: [], onDidChangeTabs: event, onDidChangeTabGroups: event },
        createOutputChannel: channel,
        registerTreeDataProvider: (id: string, p: unknown) => {
          rec.trees.set(id, p);
          return disposable;
        },
        showInputBox: async (o: any) => answers.inputBox(o),
        showQuickPick: async (items: any[]) => answers.quickPick(items),
        showInformationMessage: async (m: string) => void rec.messages.push(`info: ${m}`),
        showWarningMessage: async (m: string) => void rec.messages.push(`warning: ${m}`),
        showErrorMessage: async (m: string) => void rec.messages.push(`error: ${m}`),
        withProgress: async (options: any, task: (p: any, t: any) => Promise<unknown>) => {
          const cancel = new EventEmitter<void>();
          const entry = { options, reports: [] as any[], cancel: () => cancel.fire(), done: false };
          rec.progress.push(entry);
          const r = await task({ report: (v: any) => entry.reports.push(v) }, { isCancellationRequested: false, onCancellationRequested: cancel.event });
          entry.done = true;
          return r;
        },
      },
      { get: (t: any, k) => (k in t ? t[k] : typeof k === 'string' && k.startsWith('onDid') ? event : inert()) },
    ),
    commands: {
      registerCommand: (id: string, fn: (...a: any[]) => any) => {
        rec.commands.set(id, fn);
        return { dispose: () => rec.commands.delete(id) };
      },
      executeCommand: async () => undefined,
    },
    languages: new Proxy(
      {
        match: () => 0,
        createDiagnosticCollection: () => ({
          set: (uri: { toString(): string }, diags: any[]) => rec.diagnostics.set(uri.toString(), diags ?? []),
          delete: (uri: { toString(): string }) => rec.diagnostics.delete(uri.toString()),
          clear() {},
          dispose() {},
          get: () => [],
          has: () => false,
          forEach() {},
        }),
      },
      { get: (t: any, k) => (k in t ? t[k] : () => disposable) },
    ),
  };
  const vscode = new Proxy(api, { get: (t, k) => (k in t ? t[k as string] : k === '__esModule' ? true : inert()) });
  return { vscode, rec, state: new Memento() };
}
