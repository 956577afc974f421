// A watched build in the MCP server and the language server (docs/watch.md, "Finding the studio"):
// the real `watch` (bin → dist) runs the scripted fake probe program (fixtures/fake-probe-program.js,
// not TensorRT) while the real MCP / LSP server processes run as studios in a private registry
// folder of this test's own. The build must show in their build lists labelled watched, and their
// cancel must reach the program's probe; with two studios live, watch relays to both and a Stop
// from both at once reaches the probe once.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, waitFor, type RunningServer } from '../../mcp/test/harness.js';
import { startLsp, type LspTestClient } from '../../lsp/test/harness.js';
import { killLiveClis, spawnCli } from '../../../test/support/cli.js';

const PROGRAM = path.join(__dirname, 'fixtures', 'fake-probe-program.js');
let xdg: string;
let studioEnv: NodeJS.ProcessEnv;

beforeAll(() => {
  xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-watch-surf-'));
  // A registry of the test's own: a studio the user runs is never found (nor disturbed).
  studioEnv = { XDG_RUNTIME_DIR: xdg, TBS_NO_STUDIO: undefined };
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(xdg, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  done: Promise<number | null>;
}

function watchSlow(): Running {
  const child = spawnCli(['watch', '--json', '--', process.execPath, PROGRAM, 'slow'], { env: { ...process.env, ...studioEnv } });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, err: () => err, done };
}

interface Listed {
  buildId: string;
  state: string;
  modelPath: string;
  watched?: { program: string; pid: number; argv: string[]; probe: string };
}

const kindsPublished = (): string[] =>
  fs
    .readdirSync(path.join(xdg, 'trt-build-studio'))
    .filter((f) => /^studio-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(xdg, 'trt-build-studio', f), 'utf8')).kind)
    .sort();

async function mcpStudio(): Promise<RunningServer> {
  const s = await startServer([], undefined, studioEnv as Record<string, string | undefined>);
  await waitFor('the MCP server to publish itself', () => /watched builds: probe socket/.test(s.stderr()), 30_000);
  return s;
}
const mcpList = async (s: RunningServer): Promise<Listed[]> => ((await s.client.callTool({ name: 'list_builds', arguments: {} })).structuredContent as { builds: Listed[] }).builds;

async function lspStudio(): Promise<LspTestClient> {
  const l = await startLsp([], { env: studioEnv });
  await waitFor('the language server to publish itself', () => /watched builds: probe socket/.test(l.stderr()), 30_000);
  return l;
}
const lspList = async (l: LspTestClient): Promise<Listed[]> => (await l.execute<{ builds: Listed[] }>('trtBuildStudio.listBuilds', [])).builds;

/** The one watched build a surface lists, once it is running. */
async function runningIn(what: string, list: () => Promise<Listed[]>): Promise<Listed> {
  return waitFor(`the watched build in ${what}`, async () => (await list()).find((b) => b.watched && b.state === 'running'), 20_000);
}

function expectLabelled(b: Listed, w: Running): void {
  expect(b.watched).toMatchObject({ probe: 'python-hook' });
  expect(b.watched!.argv.at(-1)).toBe('slow');
  expect(b.watched!.pid).toBeGreaterThan(0);
  // The model path is the label: the command line and the program's pid.
  expect(b.modelPath).toContain(`(pid ${b.watched!.pid})`);
  expect(w.out()).toContain('"build.started"');
}

describe('watched builds in the MCP server and the language server', () => {
  it('MCP: list_builds shows the watched build, labelled; cancel_build reaches the probe', async () => {
    const s = await mcpStudio();
    try {
      expect(kindsPublished()).toEqual(['mcp']);
      const w = watchSlow();
      const b = await runningIn('list_builds', () => mcpList(s));
      expectLabelled(b, w);
      const got = (await s.client.callTool({ name: 'get_build', arguments: { id: b.buildId } })).structuredContent as { state: string; watched?: unknown };
      expect(got.state).toBe('running');
      // get_build carries the watched label as list_builds does.
      expect(got.watched).toEqual((b as { watched?: unknown }).watched);
      const c = (await s.client.callTool({ name: 'cancel_build', arguments: { id: b.buildId } })).structuredContent as { accepted: boolean };
      expect(c.accepted).toBe(true);
      expect(await w.done).toBe(0);
      expect(w.err()).toContain('probe received cancel 1');
      expect(w.err()).toContain('program got: None');
      await waitFor('list_builds to show it cancelled', async () => (await mcpList(s)).find((x) => x.buildId === b.buildId && x.state === 'cancelled'));
    } finally {
      await s.close();
    }
    await waitFor('the MCP server to unpublish', () => kindsPublished().length === 0 || undefined);
  });

  it('LSP: trtBuildStudio.listBuilds shows the watched build, labelled; trtBuildStudio.cancel reaches the probe', async () => {
    const l = await lspStudio();
    try {
      expect(kindsPublished()).toEqual(['lsp']);
      const w = watchSlow();
      const b = await runningIn('trtBuildStudio.listBuilds', () => lspList(l));
      expectLabelled(b, w);
      const c = await l.execute<{ cancelled: string[] }>('trtBuildStudio.cancel', [{ buildId: b.buildId }]);
      expect(c.cancelled).toEqual([b.buildId]);
      expect(await w.done).toBe(0);
      expect(w.err()).toContain('probe received cancel 1');
      expect(w.err()).toContain('program got: None');
      await waitFor('listBuilds to show it cancelled', async () => (await lspList(l)).find((x) => x.buildId === b.buildId && x.state === 'cancelled'));
      expect(await l.shutdown()).toBe(0);
    } finally {
      await l.kill();
    }
    await waitFor('the language server to unpublish', () => kindsPublished().length === 0 || undefined);
  });

  it('fan-out: with an MCP server and a language server live, both list the build; Stop from both at once reaches the probe once', async () => {
    const s = await mcpStudio();
    const l = await lspStudio();
    try {
      expect(kindsPublished()).toEqual(['lsp', 'mcp']);
      const w = watchSlow();
      const [inMcp, inLsp] = await Promise.all([runningIn('list_builds', () => mcpList(s)), runningIn('trtBuildStudio.listBuilds', () => lspList(l))]);
      expect(inMcp.watched!.pid).toBe(inLsp.watched!.pid);
      await Promise.all([s.client.callTool({ name: 'cancel_build', arguments: { id: inMcp.buildId } }), l.execute('trtBuildStudio.cancel', [{ buildId: inLsp.buildId }])]);
      expect(await w.done).toBe(0);
      expect(w.err().match(/probe received cancel/g)).toHaveLength(1);
      expect(w.err()).toContain('program got: None');
      await waitFor('both to show it cancelled', async () => {
        const [a, b] = await Promise.all([mcpList(s), lspList(l)]);
        return a.some((x) => x.buildId === inMcp.buildId && x.state === 'cancelled') && b.some((x) => x.buildId === inLsp.buildId && x.state === 'cancelled');
      });
    } finally {
      await s.close();
      await l.kill();
    }
  });
});
