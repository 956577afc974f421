// The VS Code extension with the `vscode` API and the language client replaced by test doubles:
// what it asks, what it sends to the server, and what it shows.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from './vscode-mock';

vi.mock('vscode', () => import('./vscode-mock'));

// A language client double: records the server options, notification handlers, requests.
const lcState = vi.hoisted(() => ({
  instances: [] as any[],
}));
vi.mock('vscode-languageclient/node', () => {
  class LanguageClient {
    handlers = new Map<string, (p: unknown) => void>();
    progress = new Map<unknown, (v: unknown) => void>();
    requests: any[] = [];
    notifications: any[] = [];
    running = false;
    stopped = false;
    reply: (req: any) => unknown = () => ({});
    constructor(
      readonly id: string,
      readonly name: string,
      readonly serverOptions: any,
      readonly clientOptions: any,
    ) {
      lcState.instances.push(this);
    }
    onNotification(method: string, h: (p: unknown) => void) {
      this.handlers.set(method, h);
      return { dispose: () => this.handlers.delete(method) };
    }
    onProgress(_type: unknown, token: unknown, h: (v: unknown) => void) {
      this.progress.set(token, h);
      return { dispose: () => this.progress.delete(token) };
    }
    async start() {
      this.running = true;
    }
    isRunning() {
      return this.running;
    }
    async stop() {
      this.stopped = true;
    }
    async sendRequest(_type: unknown, params: any) {
      this.requests.push(params);
      return this.reply(params);
    }
    async sendNotification(type: { method: string }, params: unknown) {
      this.notifications.push({ method: type.method, params });
    }
  }
  return {
    LanguageClient,
    ExecuteCommandRequest: { type: { method: 'workspace/executeCommand' } },
    WorkDoneProgress: { type: {} },
    WorkDoneProgressCancelNotification: { type: { method: 'window/workDoneProgress/cancel' } },
  };
});

const { activate, deactivate } = await import('../src/extension');
const { BuildTreeProvider, cacheLine } = await import('../src/build-tree');
const { checkShapeAnswer, settingsKey } = await import('../src/settings');

const DYN_SUMMARY = {
  inputs: [{ name: 'input', shape: ['batch', 3, 'height', 'width'] }],
  dynamicInputs: [{ name: 'input', dims: ['batch', 'height', 'width'] }],
};

function context() {
  return { subscriptions: [] as Array<{ dispose(): void }>, workspaceState: new vscode.Memento() };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => {
  vscode.reset();
  lcState.instances.length = 0;
});

describe('activation', () => {
  it("starts `trt-build-studio lsp`, or a checkout's .js entry with node", async () => {
    await activate(context() as any);
    expect(lcState.instances[0].serverOptions.run).toEqual({ command: 'trt-build-studio', args: ['lsp'] });
    expect(lcState.instances[0].running).toBe(true);
    expect([...vscode.shown.commands.keys()].sort()).toEqual(['trtBuildStudio.buildEngine', 'trtBuildStudio.forgetModelSettings', 'trtBuildStudio.stopBuild']);
    await deactivate();
    expect(lcState.instances[0].stopped).toBe(true);

    vscode.shown.config.set('server.path', '/opt/tbs/bin/trt-build-studio.js');
    vscode.shown.config.set('server.extraArgs', ['--output-dir', '/data']);
    await activate(context() as any);
    expect(lcState.instances[1].serverOptions.run).toEqual({ command: 'node', args: ['/opt/tbs/bin/trt-build-studio.js', 'lsp', '--output-dir', '/data'] });
  });

  it('feeds the tree view from buildView and the output channel from buildLog', async () => {
    await activate(context() as any);
    const lc = lcState.instances[0];
    lc.handlers.get('trtBuildStudio/buildView')!(view({ percentage: 42 }));
    const tree = vscode.shown.trees.get('trtBuildStudio.buildView');
    const roots = tree.getChildren();
    expect(tree.getTreeItem(roots[0]).label).toBe('m.onnx: running 42%');
    lc.handlers.get('trtBuildStudio/buildLog')!({ buildId: 'b1', lines: [{ severity: 'warning', message: 'weights are fp16', t: 1500 }] });
    expect(vscode.shown.output.get('TensorRT Build')).toContain('  [b1 +1.500 s] WARNING: weights are fp16');
  });
});

function view(over: Record<string, unknown> = {}) {
  return {
    buildId: 'b1',
    modelPath: '/models/m.onnx',
    state: 'running',
    currentPath: ['Building engine', 'Timing'],
    message: 'Building engine 2/6 › Timing 3/8',
    percentage: 10,
    sinceLastCallbackMs: 1200,
    elapsedMs: 4000,
    simulated: true,
    rows: [
      { path: ['Building engine'], instances: 1, open: 1, stepsDone: 2, nbSteps: 6, spanMs: 4000 },
      { path: ['Building engine', 'Timing'], instances: 1, open: 1, stepsDone: 3, nbSteps: 8, spanMs: 3000 },
      { path: ['Building engine', 'Timing', 'Measure'], instances: 250, open: 1, stepsDone: 1, nbSteps: 4, spanMs: 2900 },
    ],
    cache: { entriesBefore: 10, entriesAfter: 25, added: 15, bytes: 4096, hits: 10, misses: 15 },
    ...over,
  };
}

describe('the TensorRT Build view', () => {
  it('nests phases by path with steps, counts and times, and shows the cache figures', () => {
    const tree = new BuildTreeProvider();
    let fired = 0;
    tree.onDidChangeTreeData(() => fired++);
    expect(tree.getTreeItem(tree.getChildren()[0]).label).toBe('No build yet');
    tree.update(view() as any);
    expect(fired).toBe(1);
    const roots = tree.getChildren();
    expect(roots.map((n: any) => n.kind)).toEqual(['status', 'cache', 'phase']);
    const status = tree.getTreeItem(roots[0]);
    expect(status.description).toBe('4.0 s · last TensorRT callback 1.2 s ago · simulated');
    expect(tree.getTreeItem(roots[1]).description).toBe('25 entries (+15), 10 hits, 15 misses, 4.0 KiB');
    const engine = roots[2];
    expect(tree.getTreeItem(engine)).toMatchObject({ label: 'Building engine', description: '2/6 · 4.0 s', collapsibleState: vscode.TreeItemCollapsibleState.Expanded });
    const [timing] = tree.getChildren(engine);
    const [measure] = tree.getChildren(timing);
    expect(tree.getTreeItem(measure)).toMatchObject({ label: 'Measure', description: '×250 · 2.9 s' });
    expect(tree.getChildren(measure)).toEqual([]);
  });

  it('shows the outcome and the engine path once the build ends', () => {
    const tree = new BuildTreeProvider();
    tree.update(view({ state: 'succeeded', percentage: 100, outcome: { status: 'succeeded', message: 'done', outputPath: '/models/m.engine' } }) as any);
    const roots = tree.getChildren();
    expect(tree.getTreeItem(roots[0]).label).toBe('m.onnx: succeeded 100%');
    expect(roots.find((n: any) => n.kind === 'info')).toMatchObject({ label: 'Engine', description: '/models/m.engine' });
    expect(cacheLine(view({ cache: undefined }) as any)).toBeUndefined();
  });
});

describe('shape answers', () => {
  const shape = ['batch', 3, 'height', 'width'];
  it('accepts min/opt/max with the fixed dims kept', () => {
    expect(checkShapeAnswer('1x3x224x224/4x3x224x224/8x3x448x448', shape)).toBeUndefined();
  });
  it('says what is wrong', () => {
    expect(checkShapeAnswer('1x3x224x224', shape)).toMatch(/min\/opt\/max/);
    expect(checkShapeAnswer('1x3x224/4x3x224x224/8x3x224x224', shape)).toBe('min has 3 dimensions, the input has 4');
    expect(checkShapeAnswer('1x4x224x224/4x3x224x224/8x3x224x224', shape)).toBe('dimension 1 is fixed at 3 in the model');
    expect(checkShapeAnswer('8x3x224x224/4x3x224x224/1x3x224x224', shape)).toBe('dimension 0: min <= opt <= max does not hold');
    expect(checkShapeAnswer('1x3xABx224/4x3x224x224/8x3x224x224', shape)).toMatch(/not a shape/);
  });
});

describe('TensorRT: Build Engine', () => {
  async function setup(reply: (req: any) => unknown) {
    const ctx = context();
    await activate(ctx as any);
    const lc = lcState.instances.at(-1);
    lc.reply = reply;
    return { ctx, lc, build: vscode.shown.commands.get('trtBuildStudio.buildEngine')!, stop: vscode.shown.commands.get('trtBuildStudio.stopBuild')! };
  }

  it('asks for the missing shapes and options, builds with a workDoneToken, shows the progress with Cancel, and remembers the answers', async () => {
    let token: unknown;
    let releaseBuild!: (v: unknown) => void;
    const { ctx, lc, build } = await setup((req) => {
      if (req.command === 'trtBuildStudio.inspect') return DYN_SUMMARY;
      if (req.command === 'trtBuildStudio.backends') {
        return {
          backends: [
            { name: 'tensorrt', available: false, reason: 'compiled without TensorRT 10 headers' },
            { name: 'simulated', available: true, version: 'sim' },
          ],
        };
      }
      if (req.command === 'trtBuildStudio.build') {
        token = req.workDoneToken;
        return new Promise((r) => (releaseBuild = r));
      }
      return {};
    });
    vscode.window.showInputBox
      .mockImplementationOnce(async (o: any) => {
        // The example offered first is valid; a wrong answer is refused with a reason.
        expect(o.validateInput(o.value)).toBeUndefined();
        expect(o.validateInput('1x3x224x224')).toMatch(/min\/opt\/max/);
        return '1x3x224x224/2x3x224x224/4x3x224x224';
      })
      .mockImplementationOnce(async (o: any) => o.value) // engine path: the default
      .mockImplementationOnce(async () => ''); // no timing cache
    vscode.window.showQuickPick
      .mockImplementationOnce(async (items: any[]) => {
        // The choices say what each backend means on this machine, from the server's list.
        expect(items.find((i) => i.label === 'tensorrt').description).toBe('not available: compiled without TensorRT 10 headers');
        expect(items.find((i) => i.label === 'auto').description).toBe('TensorRT is not available here: builds are simulated');
        return items.find((i) => i.label === 'simulated');
      })
      .mockImplementationOnce(async (items: any[]) => items.find((i) => i.label === '5'));

    const model = vscode.Uri.file('/models/dyn.onnx');
    const running = build(model) as Promise<any>;
    await vi.waitFor(() => expect(token).toBeDefined());
    const req = lc.requests.find((r: any) => r.command === 'trtBuildStudio.build');
    expect(req.arguments[0]).toEqual({
      modelPath: '/models/dyn.onnx',
      outputPath: '/models/dyn.engine',
      options: { backend: 'simulated', optLevel: 5, shapes: ['input:1x3x224x224/2x3x224x224/4x3x224x224'] },
    });
    expect(vscode.commands.executeCommand).toHaveBeenCalledWith('setContext', 'trtBuildStudio.building', true);

    // The server's $/progress for that token drives the notification.
    const send = lc.progress.get(token)!;
    send({ kind: 'begin', title: 'TensorRT build: dyn.onnx', cancellable: true, percentage: 0 });
    send({ kind: 'report', message: 'Building engine 2/6 · last TensorRT callback 0.1 s ago', percentage: 10 });
    send({ kind: 'report', message: 'still building', percentage: 10 });
    send({ kind: 'report', message: 'Building engine 3/6', percentage: 40 });
    await flush();
    const shownProgress = vscode.shown.progress[0];
    expect(shownProgress.options).toMatchObject({ location: vscode.ProgressLocation.Notification, cancellable: true, title: 'TensorRT: building dyn.onnx' });
    expect(shownProgress.reports).toEqual([
      { message: 'Building engine 2/6 · last TensorRT callback 0.1 s ago', increment: 10 },
      { message: 'still building' },
      { message: 'Building engine 3/6', increment: 30 },
    ]);
    // Cancel in the notification becomes window/workDoneProgress/cancel for the build's token.
    shownProgress.cancel();
    expect(lc.notifications).toEqual([{ method: 'window/workDoneProgress/cancel', params: { token } }]);
    send({ kind: 'end', message: 'Build b1 cancelled' });
    releaseBuild({ buildId: 'b1', status: 'cancelled', message: 'Build b1 cancelled after 1.0 s; no engine was written' });
    const result = await running;
    expect(result.status).toBe('cancelled');
    await flush();
    expect(shownProgress.done).toBe(true);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith('Build b1 cancelled after 1.0 s; no engine was written');
    expect(vscode.commands.executeCommand).toHaveBeenLastCalledWith('setContext', 'trtBuildStudio.building', false);
    expect(ctx.workspaceState.get<any>(settingsKey('/models/dyn.onnx'))).toMatchObject({
      backend: 'simulated',
      optLevel: 5,
      shapes: { input: '1x3x224x224/2x3x224x224/4x3x224x224' },
      timingCache: '',
    });
    expect(vscode.shown.output.get('TensorRT Build')!.at(-1)).toBe('■ Build b1 cancelled after 1.0 s; no engine was written');

    // The second build of the same model offers the remembered settings and asks nothing else.
    vscode.window.showInputBox.mockReset();
    vscode.window.showQuickPick.mockReset().mockImplementationOnce(async (items: any[]) => {
      expect(items[0].description).toBe('simulated · opt level 5 · input:1x3x224x224/2x3x224x224/4x3x224x224 · no timing cache');
      return items[0];
    });
    lc.reply = (r: any) =>
      r.command === 'trtBuildStudio.inspect' ? DYN_SUMMARY : { buildId: 'b2', status: 'succeeded', message: 'Build b2 succeeded', outputPath: '/models/dyn.engine' };
    const second = await (build(model) as Promise<any>);
    expect(second.status).toBe('succeeded');
    expect(vscode.window.showInputBox).not.toHaveBeenCalled();
    expect(vscode.window.showInformationMessage).toHaveBeenLastCalledWith('Build b2 succeeded', 'Reveal Engine');
  });

  it('stops when a question is dismissed, and remembers nothing', async () => {
    const { ctx, lc, build } = await setup((req) => (req.command === 'trtBuildStudio.inspect' ? DYN_SUMMARY : {}));
    vscode.window.showInputBox.mockResolvedValueOnce(undefined);
    expect(await build(vscode.Uri.file('/models/dyn.onnx'))).toBeUndefined();
    expect(lc.requests.map((r: any) => r.command)).toEqual(['trtBuildStudio.inspect', 'trtBuildStudio.backends']);
    expect(ctx.workspaceState.keys()).toEqual([]);
  });

  it("shows the server's message when the model is bad or the build fails", async () => {
    const { build, lc } = await setup((req) => {
      if (req.command === 'trtBuildStudio.inspect') return Promise.reject(new Error('trtBuildStudio.inspect: /m/notes.onnx is not a valid ONNX model'));
      return {};
    });
    expect(await build(vscode.Uri.file('/m/notes.onnx'))).toBeUndefined();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith('trtBuildStudio.inspect: /m/notes.onnx is not a valid ONNX model');
    expect(lc.requests).toHaveLength(1);

    const fixed = { inputs: [{ name: 'x', shape: [1, 3] }], dynamicInputs: [] };
    lc.reply = (req: any) => {
      if (req.command === 'trtBuildStudio.inspect') return fixed;
      const err = Object.assign(new Error('trtBuildStudio.build: Build b3 crashed after 0.3 s'), { data: { buildId: 'b3', status: 'crashed', message: 'Build b3 crashed' } });
      return Promise.reject(err);
    };
    vscode.window.showQuickPick.mockImplementation(async (items: any[]) => items[0]);
    vscode.window.showInputBox.mockImplementation(async (o: any) => o.value);
    const r = await (build(vscode.Uri.file('/m/fixed.onnx')) as Promise<any>);
    expect(r.status).toBe('crashed');
    expect(vscode.window.showErrorMessage).toHaveBeenLastCalledWith('trtBuildStudio.build: Build b3 crashed after 0.3 s');
    // The notification closes even though no `end` came.
    await flush();
    expect(vscode.shown.progress.at(-1)!.done).toBe(true);
  });

  it('without a file from the explorer, asks for one', async () => {
    const { build, lc } = await setup(() => ({}));
    vscode.window.showOpenDialog.mockResolvedValueOnce(undefined);
    expect(await build()).toBeUndefined();
    expect(vscode.window.showOpenDialog).toHaveBeenCalledWith(expect.objectContaining({ filters: { 'ONNX models': ['onnx'] } }));
    expect(lc.requests).toEqual([]);
  });

  it("TensorRT: Stop Build cancels the server's running builds", async () => {
    const { stop, lc } = await setup((req) => (req.command === 'trtBuildStudio.cancel' ? { cancelled: [], message: 'no running build to cancel' } : {}));
    await stop();
    expect(lc.requests).toEqual([{ command: 'trtBuildStudio.cancel', arguments: [{}] }]);
    expect(vscode.window.showInformationMessage).toHaveBeenCalledWith('No TensorRT build is running.');
  });
});
