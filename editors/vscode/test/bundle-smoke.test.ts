// The packaged extension (the same vite bundle the .vsix carries, with the real
// vscode-languageclient inside) against the real language server and real build workers, in a
// stand-in extension host: the whole path from "TensorRT: Build Engine" to the engine file.
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeModel } from '../../../test/support/onnx-gen';
import { childPids, isAlive, waitFor } from '../../../apps/mcp/test/harness';
import { makeHost } from './vscode-host';

const EXT = path.resolve(__dirname, '..');
const REPO = path.resolve(EXT, '../..');
const SERVER = path.join(REPO, 'dist/apps/lsp/command.js');

let dir: string;
let bundle: string;
let restoreLoad: (() => void) | undefined;
let ext: { activate(c: unknown): Promise<void>; deactivate(): Promise<void> } | undefined;

beforeAll(async () => {
  for (const [what, p] of [
    ['the language server (run `npm run build:ts`)', SERVER],
    ['vscode-languageclient (run `npm ci --prefix editors/vscode`)', path.join(EXT, 'node_modules/vscode-languageclient/package.json')],
  ]) {
    if (!fs.existsSync(p)) throw new Error(`${what} is missing: ${p}`);
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-vsix-'));
  await build({ configFile: path.join(EXT, 'vite.config.mts'), logLevel: 'silent', build: { outDir: path.join(dir, 'bundle'), emptyOutDir: true } });
  bundle = path.join(dir, 'bundle', 'extension.js');
}, 120_000);

/** The server processes this test started (children of this process running the entry script). */
function serverPids(entry: string): number[] {
  return childPids(process.pid).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(entry);
    } catch {
      return false;
    }
  });
}

afterAll(async () => {
  // The client restarts a server that dies, so it is stopped before anything is killed.
  await ext?.deactivate().catch(() => undefined);
  restoreLoad?.();
  // On failure, nothing may outlive the test: the server and its workers are killed by pid.
  if (dir) {
    for (const pid of serverPids(path.join(dir, 'server.js'))) {
      for (const w of childPids(pid)) if (isAlive(w)) process.kill(w, 'SIGKILL');
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the bundled extension with the real language client and server', () => {
  it('builds a dynamic model from the Build Engine command, shows progress, tree, log, diagnostics, and leaves nothing behind', async () => {
    const model = writeModel(path.join(dir, 'dyn.onnx'), { dynamic: true, layers: 2 });
    const bad = path.join(dir, 'notes.onnx');
    fs.writeFileSync(bad, 'not a model\n');
    // `trtBuildStudio.server.path` may name a .js entry; this one starts the server in-process of node.
    const entry = path.join(dir, 'server.js');
    fs.writeFileSync(entry, `require(${JSON.stringify(SERVER)}).runLsp(process.argv.slice(3)).then((c) => process.exit(c));\n`);
    const { vscode, rec, state } = makeHost(
      { 'trtBuildStudio.server.path': entry, 'trtBuildStudio.server.extraArgs': [], 'trtBuildStudio.defaultBackend': 'simulated' },
      {
        inputBox: (o) => (o.title.startsWith('Shapes') ? '1x3x64x64/2x3x64x64/4x3x64x64' : o.value),
        quickPick: (items) => items.find((i: any) => i.label === 'simulated') ?? items.find((i: any) => i.label === '0') ?? items[0],
      },
    );
    const load = (Module as any)._load;
    (Module as any)._load = function (request: string, ...rest: unknown[]) {
      return request === 'vscode' ? vscode : load.call(this, request, ...rest);
    };
    restoreLoad = () => ((Module as any)._load = load);
    ext = require(bundle);
    const context = {
      subscriptions: [] as Array<{ dispose(): void }>,
      workspaceState: state,
      globalState: state,
      extensionPath: EXT,
      asAbsolutePath: (p: string) => path.join(EXT, p),
    };
    await ext!.activate(context);

    const result = await rec.commands.get('trtBuildStudio.buildEngine')!(vscode.Uri.file(model));
    expect(result.status).toBe('succeeded');
    const engine = path.join(dir, 'dyn.engine');
    expect(result.outputPath).toBe(engine);
    expect(fs.readFileSync(engine, 'latin1')).toMatch(/^TRT-BUILD-STUDIO SIMULATED ENGINE/);
    expect(rec.messages).toContain(`info: ${result.message}`);

    // VS Code's progress notification, with Cancel, drawn from the server's $/progress.
    const shown = rec.progress.find((p) => p.options.location === vscode.ProgressLocation.Notification)!;
    expect(shown.options).toMatchObject({ cancellable: true, title: 'TensorRT: building dyn.onnx' });
    expect(shown.done).toBe(true);
    expect(shown.reports.some((r) => r.message?.includes(' › '))).toBe(true);
    const total = shown.reports.reduce((s, r) => s + (r.increment ?? 0), 0);
    expect(total).toBe(100);

    // The tree view got the final snapshot; the output channel the log and the outcome.
    const tree = rec.trees.get('trtBuildStudio.buildView');
    const roots = tree.getChildren();
    expect(tree.getTreeItem(roots[0]).label).toBe('dyn.onnx: succeeded 100%');
    expect(roots.some((n: any) => n.kind === 'cache')).toBe(true);
    expect(roots.filter((n: any) => n.kind === 'phase').length).toBeGreaterThan(0);
    expect(rec.output.get('TensorRT Build')!.at(-1)).toBe(`■ ${result.message}`);

    // A bad file: the server's message, and a diagnostic on the file through the client.
    await rec.commands.get('trtBuildStudio.buildEngine')!(vscode.Uri.file(bad));
    expect(rec.messages.at(-1)).toMatch(/^error: .*is not an ONNX model/);
    const diags = await waitFor('the diagnostic (client log: ' + rec.output.get('TRT Build Studio (language server)')?.join(' | ') + ')', () =>
      [...rec.diagnostics.entries()].find(([uri, d]) => uri.endsWith('notes.onnx') && d.length > 0),
    );
    expect(diags[1][0].message).toContain('is not an ONNX model');

    // Cancel from the notification stops a long build; no engine.
    const longModel = writeModel(path.join(dir, 'long.onnx'), { layers: 4 });
    state.update(`trtBuildStudio.model:${longModel}`, undefined);
    const before = rec.progress.length;
    const pending = rec.commands.get('trtBuildStudio.buildEngine')!(vscode.Uri.file(longModel));
    // The picks above choose opt level 0; the simulated build of a 4-layer model still takes a
    // second or two, enough to press Cancel once it reports a phase.
    const note = await waitFor('the progress notification', () => rec.progress[before]);
    await waitFor('a phase report', () => note.reports.some((r) => r.message?.includes(' › ')) || undefined, 20_000);
    note.cancel();
    const cancelled = await pending;
    expect(cancelled.status).toBe('cancelled');
    expect(fs.existsSync(path.join(dir, 'long.engine'))).toBe(false);

    // Deactivation stops the client: shutdown + exit, and the server and its workers are gone.
    const servers = serverPids(entry);
    expect(servers).toHaveLength(1);
    const workers = childPids(servers[0]);
    await ext!.deactivate();
    await waitFor('the server to exit', () => !isAlive(servers[0]) || undefined, 15_000);
    expect(workers.filter(isAlive)).toEqual([]);
  }, 120_000);
});
