// The cross-surface contract: one event stream, pushed through every surface's real code, gives
// the same build everywhere — the same status, current path, work, progress fraction, rows with
// their instance counts, outcome and crash site. The streams: a real simulated build recorded
// from the CLI's `build --json` (the NDJSON surface itself), and synthetic TensorRT-like builds
// that crash (with the crash site the service reports) and that are cancelled.
//
// Surfaces: the CLI's NDJSON writer parsed back, and the CLI's follow path (`build`'s own:
// followIntoRenderer into the terminal renderer); the HTTP server's SSE stream (in process, fed
// the same stream; and a real `serve` process building the recorded build's model and seed) read
// raw and by the web client into the page's LiveBuild; the Electron stream hub (Electron mocked:
// a fake WebContents receives what a window would) and the page's LiveBuild fed from it; the
// taskbar feedback; the MCP build_engine tool with its progress notifications; the LSP build
// command with its work-done reports and buildView notifications. Each is compared with the build
// view folded straight from the stream, and every surface that follows a build in process does so
// through the shared LiveView (apps/shared/live-view.ts: checked with a spy on LiveView.follow).
// Servers and processes started here are stopped in afterAll/finally, also on failure.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BuildFeedback } from '../../apps/main/build-feedback.js';
import { followIntoRenderer } from '../../apps/cli/render/follow.js';
import { TtyRenderer } from '../../apps/cli/render/tty-renderer.js';
import { LiveBuild } from '../../apps/renderer/store/live-build.js';
import { WebBuildClient } from '../../apps/renderer/web/web-client.js';
import { LiveView } from '../../apps/shared/live-view.js';
import { SubscriptionHub } from '../../apps/main/subscription-hub.js';
import { FakeWebContents } from '../../apps/main/test/fake-electron.js';
import type { BuildStreamMessage } from '../../apps/main/ipc-channels.js';
import { ActiveBuilds, runBuildCommand, type LspBuildResult } from '../../apps/lsp/build-command.js';
import { phaseRows, type BuildView as LspView } from '../../apps/lsp/build-view-notification.js';
import { runBuildTool, type ToolExtra } from '../../apps/mcp/build-tool.js';
import { CancelReasons } from '../../apps/surface/cancel-reasons.js';
import { summarizePhases } from '../../apps/surface/phase-summary.js';
import type { BuildResultOut } from '../../apps/surface/schemas.js';
import { JsonRenderer } from '../../apps/cli/render/json-renderer.js';
import type { BuildServiceApi } from '../../apps/service/api.js';
import { createHttpServer, type BuildHttpServer } from '../../apps/service/http/server.js';
import { SseParser } from '../../apps/service/http/sse-parser.js';
import { BuildView } from '../../apps/shared/build-view.js';
import { BuildViewSnapshot } from '../../apps/shared/build-view-schema.js';
import { BuildEvent, type BuildRecord } from '../../apps/shared/protocol.js';
import { crashSite as crashSiteOf, formatCrashSite, formatCurrentPath, viewFromRecord } from '../../apps/shared/view-format.js';
import { formatDuration } from '../../apps/shared/format.js';
import { killLiveClis, parseNdjson, runCli } from '../support/cli.js';
import { tempDir, writeModel } from '../support/onnx-gen.js';
import { tensorrtLikeStream } from '../support/synthetic-build.js';
import { startServe } from '../../apps/service/http/test/serve-process.js';
import { ReplayService } from './replay-service.js';

let dir: string;
let model: string;
let recorded: BuildEvent[];
const servers: BuildHttpServer[] = [];

beforeAll(async () => {
  dir = tempDir('tbs-contract-');
  model = writeModel(path.join(dir, 'contract model.onnx'), { layers: 6 });
  const r = await runCli(['build', model, '-o', path.join(dir, 'recorded.engine'), '--backend', 'simulated', '--sim-duration', '0.6', '--sim-seed', '3', '--json']);
  expect(r.code, r.stderr).toBe(0);
  recorded = parseNdjson(r.stdout).map((e) => BuildEvent.parse(e));
}, 60_000);

afterAll(async () => {
  killLiveClis();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** The reference: the build view folded straight from the stream. */
function fold(events: readonly BuildEvent[]): BuildView {
  const v = new BuildView(events[0].buildId);
  for (const e of events) v.apply(e, 0);
  return v;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The CLI's NDJSON writer, read back line by line. */
async function throughNdjson(events: readonly BuildEvent[]): Promise<BuildView> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const r = new JsonRenderer(out);
  for (let i = 0; i < events.length; i += 25) r.events(events.slice(i, i + 25));
  await r.flushed();
  return fold(parseNdjson(text).map((e) => BuildEvent.parse(e)));
}

/** A stream client's view: from the snapshot (a record, or a view snapshot once the service sends one) and the events after it. */
class StreamView {
  view?: BuildView;
  onSnapshot(data: unknown): void {
    const o = data as { rows?: unknown };
    this.view = o.rows !== undefined && !Array.isArray(o.rows) ? BuildView.fromSnapshot(BuildViewSnapshot.parse(data)) : viewFromRecord(data as BuildRecord);
  }
  onEvents(events: BuildEvent[]): void {
    if (!this.view) throw new Error('an event before the snapshot');
    for (const e of events) this.view.apply(BuildEvent.parse(e), Date.now());
  }
}

/** Everything the surfaces are wired to, following one replayed build. */
async function wireSurfaces(svc: ReplayService) {
  const service = svc as unknown as BuildServiceApi;
  const id = svc.events[0].buildId;
  // SSE from the real HTTP server.
  const server = createHttpServer({ service, token: 'contract-token', uploadDir: dir, staticDir: dir, heartbeatMs: 60_000 });
  servers.push(server);
  const port = await server.listen(0, '127.0.0.1');
  const sse = new StreamView();
  let sseEnded = false;
  const res = await fetch(`http://127.0.0.1:${port}/api/builds/${id}/events`, {
    headers: { Authorization: 'Bearer contract-token', Accept: 'text/event-stream' },
  });
  expect(res.status).toBe(200);
  const parser = new SseParser((m) => {
    if (m.event === 'snapshot' || m.event === 'reset') sse.onSnapshot(JSON.parse(m.data));
    else sse.onEvents([JSON.parse(m.data)]);
  });
  void (async () => {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.push(chunk);
    sseEnded = true;
  })();

  // The Electron hub, sending to a mocked window.
  const hub = new SubscriptionHub(service);
  const contents = new FakeWebContents();
  const hubView = new StreamView();
  let hubSent = 0;
  const pumpHub = () => {
    for (; hubSent < contents.sent.length; hubSent++) {
      const msg = contents.sent[hubSent][1] as BuildStreamMessage;
      if (msg.kind === 'snapshot') hubView.onSnapshot(msg.view ?? msg.record);
      else if (msg.kind === 'events') {
        hubView.onEvents(msg.events);
        hub.ack(contents.id, 's1', msg.batch); // as the preload does once the page took it
      }
    }
    return hubView.view;
  };
  hub.open(contents, 's1', id);

  // The MCP build_engine tool, with a progress token.
  const mcpNotes: Array<{ progress: number; message: string }> = [];
  const extra = {
    signal: new AbortController().signal,
    _meta: { progressToken: 'mcp-token' },
    sendNotification: async (n: { params: { progress: number; message: string } }) => void mcpNotes.push(n.params),
  } as unknown as ToolExtra;
  const mcp = runBuildTool(
    { service, reasons: new CancelReasons(), notifier: { minIntervalMs: 0, heartbeatMs: 60_000 } },
    { modelPath: model, options: { backend: 'simulated' } },
    extra,
  );

  // The LSP build command, with a work-done token.
  const lspViews: LspView[] = [];
  const lspReports: Array<{ kind: string; message?: string; percentage?: number }> = [];
  const lsp = runBuildCommand(
    {
      service,
      reasons: new CancelReasons(),
      active: new ActiveBuilds(),
      viewIntervalMs: 0,
      pacing: { minIntervalMs: 0, heartbeatMs: 60_000 },
      port: {
        sendProgress: (_t, v) => void lspReports.push(v as (typeof lspReports)[number]),
        sendNotification: (method, params) => void (method === 'trtBuildStudio/buildView' && lspViews.push(params as LspView)),
        publishDiagnostics: () => undefined,
        createProgressToken: async () => undefined,
        log: () => undefined,
      },
    },
    { modelPath: model, options: { backend: 'simulated' } },
    { workDoneToken: 'lsp-token', cancel: { isCancellationRequested: false, onCancellationRequested: () => ({ dispose: () => undefined }) } },
  ).catch((e: { data?: LspBuildResult }) => {
    if (!e.data) throw e;
    return e.data;
  });

  // The page of the desktop app: what the hub sends, into the page's LiveBuild (as the
  // controller applies it).
  const hubPage = new LiveBuild(id);
  let hubPageSent = 0;
  const pumpHubPage = () => {
    for (; hubPageSent < contents.sent.length; hubPageSent++) {
      const msg = contents.sent[hubPageSent][1] as BuildStreamMessage;
      if (msg.kind === 'snapshot') hubPage.applySnapshot(msg.record, msg.view, Date.now());
      else if (msg.kind === 'events') hubPage.applyEvents(msg.events, Date.now());
    }
    return hubPage.view;
  };

  // The web page: the web client reading the real server's SSE (its own auth: a bearer header in
  // place of the page's cookie), into the page's LiveBuild.
  const webPage = new LiveBuild(id);
  const web = new WebBuildClient({
    fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: 'Bearer contract-token' } }),
    document: {} as Document,
    base: `http://127.0.0.1:${port}`,
  });
  const webErrors: Error[] = [];
  const stopWeb = web.subscribe(id, {
    onSnapshot: (rec, view) => webPage.applySnapshot(rec, view, Date.now()),
    onEvents: (events) => webPage.applyEvents(events, Date.now()),
    onError: (e) => void webErrors.push(e),
  });

  // The taskbar progress bar and the end-of-build notification.
  const bar: number[] = [];
  const notes: Array<[string, string]> = [];
  const feedback = new BuildFeedback({
    service,
    window: () => ({ isDestroyed: () => false, isFocused: () => false, setProgressBar: (v: number) => void bar.push(v) }),
    notify: (title, body) => void notes.push([title, body]),
    setStopEnabled: () => undefined,
    throttleMs: 0,
  });
  feedback.track(id, model);

  // The CLI's `build`: the same follow path into the terminal renderer.
  const term = Object.assign(new PassThrough(), { columns: 200, rows: 60 });
  term.resume();
  const tty = new TtyRenderer(term as unknown as NodeJS.WriteStream);
  tty.begin(svc.getBuild(id)!);
  const cli = followIntoRenderer(service, id, tty);

  // SSE (raw and the web client's), hub, feedback, CLI, MCP and LSP: everyone is listening before the first event.
  await until('every surface to subscribe', () => (svc.subscribers === 7 ? true : undefined));
  return {
    sse: () => sse.view,
    sseEnded: () => sseEnded,
    hub: pumpHub,
    hubPage: pumpHubPage,
    webPage: () => webPage.view,
    webErrors,
    bar,
    notes,
    cli,
    tty,
    mcpNotes,
    mcp,
    lspViews,
    lspReports,
    lsp,
    close: async () => {
      stopWeb();
      feedback.dispose();
      tty.dispose();
      await server.close();
    },
  };
}

/**
 * A view's snapshot as it must agree across surfaces. A surface may coalesce steps in transit (the
 * protocol allows it; Electron's batcher does under load), so it sees fewer intermediate states:
 * the high-water progress fraction, the number of events that arrived and the absolute activity
 * counters can differ, while the order
 * of activity (which phase was touched last), the rows, work, status and outcome cannot.
 */
function comparable(snap: ReturnType<BuildView['snapshot']>) {
  const { fraction: _f, rows, ...rest } = snap;
  // phaseEvents counts the events that arrived (a transport figure), tick the activity counter.
  const { tick: _t, phaseEvents: _n, open, ...restRows } = rows;
  const byActivity = [...open].sort((a, b) => a.activity - b.activity).map(({ activity: _a, ...o }) => o);
  return { ...rest, rows: { ...restRows, open: byActivity } };
}

/** The figures every surface shows, from a build view (the fraction is checked on its own). */
function figures(v: BuildView) {
  return {
    status: v.status,
    work: v.work,
    currentPath: v.currentPath(),
    outcome: v.outcome && { status: v.outcome.status, durationMs: v.outcome.durationMs, lastPhasePath: v.outcome.lastPhasePath },
    rows: phaseRows(v, v.elapsedMs()).map((r) => [r.path.join(' › '), r.instances, r.open, r.stepsDone, r.nbSteps]),
  };
}

describe('a real `serve` and the CLI, building the same model with the same seed', () => {
  it('show the same build: rows with their counts, work, status and outcome', async () => {
    const serve = await startServe(['--concurrency', '1', '--output-dir', path.join(dir, 'engines'), '--heartbeat-ms', '200']);
    try {
      const auth = { Authorization: `Bearer ${serve.token}` };
      const post = await fetch(`${serve.base}/api/builds`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ modelPath: model, options: { backend: 'simulated', simDuration: 0.6, simSeed: 3 } }),
      });
      expect(post.status, await post.clone().text()).toBe(201);
      const { id } = (await post.json()) as { id: string };
      const res = await fetch(`${serve.base}/api/builds/${id}/events?lastEventId=-1`, { headers: { ...auth, Accept: 'text/event-stream' } });
      expect(res.status).toBe(200);
      const viaSse = new StreamView();
      const parser = new SseParser((m) => {
        if (m.event === 'snapshot' || m.event === 'reset') viaSse.onSnapshot(JSON.parse(m.data));
        else viaSse.onEvents([JSON.parse(m.data)]);
      });
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.push(chunk);
      const cli = fold(recorded);
      const sse = viaSse.view!;
      // Timing differs from run to run (and so do coalesced step events); what TensorRT reported does not.
      const shape = (v: BuildView) => {
        const f = figures(v);
        return { status: f.status, work: f.work, outcome: f.outcome?.status, rows: f.rows };
      };
      expect(shape(sse)).toEqual(shape(cli));
      expect(sse.rows.byKey.size).toBeGreaterThan(5);
    } finally {
      await serve.stop();
    }
  });
});

const STREAMS: Array<[string, () => BuildEvent[]]> = [
  ['a real simulated build recorded from `build --json`', () => recorded],
  ['a build that crashes while timing tactics', () => tensorrtLikeStream(4, { nodes: 10, end: 'crashed', dt: 3, buildId: 'b-crash' })],
  ['a build cancelled while timing tactics', () => tensorrtLikeStream(6, { nodes: 10, end: 'cancelled', dt: 3, buildId: 'b-cancel' })],
];

describe('one event stream, the same build on every surface', () => {
  for (const [name, streamOf] of STREAMS) {
    it(name, async () => {
      const events = streamOf();
      expect(events.at(-1)?.type).toBe('build.finished');
      const ref = fold(events);
      const svc = new ReplayService(events, model);
      const follows = vi.spyOn(LiveView.prototype, 'follow');
      const s = await wireSurfaces(svc);
      try {
        // Hub, taskbar feedback, CLI, MCP and LSP each follow the build through a LiveView.
        expect(follows.mock.contexts.map((live) => (live as LiveView).buildId)).toEqual(Array(5).fill(ref.buildId));
        // Half way: where the builder is, how much work, the rows so far.
        const mid = Math.floor(events.length / 2);
        await svc.play(mid);
        const refMid = fold(events.slice(0, mid));
        const lastSeq = events[mid - 1].seq;
        const sseMid = await until('SSE to catch up', () => (s.sse()?.seq === lastSeq ? s.sse() : undefined));
        const hubMid = await until('the hub to flush', () => (s.hub()?.seq === lastSeq ? s.hub() : undefined));
        const hubPageMid = await until('the desktop page to catch up', () => (s.hubPage().seq === lastSeq ? s.hubPage() : undefined));
        const webMid = await until('the web page to catch up', () => (s.webPage().seq === lastSeq ? s.webPage() : undefined));
        expect(refMid.currentPath().length).toBeGreaterThan(0);
        expect(figures(sseMid)).toEqual(figures(refMid));
        expect(figures(hubMid)).toEqual(figures(refMid));
        expect(figures(hubPageMid)).toEqual(figures(refMid));
        expect(figures(webMid)).toEqual(figures(refMid));
        // The CLI's live view and the taskbar have every event: the same view, the same fraction.
        expect(s.cli.view.seq).toBe(lastSeq);
        expect(figures(s.cli.view)).toEqual(figures(refMid));
        await until('the taskbar to show the half-way fraction', () => (s.bar.at(-1) === Math.max(0.01, refMid.fraction()) ? true : undefined));
        // MCP and LSP show the current path in their own words.
        const where = formatCurrentPath(refMid.currentPath());
        await until('an MCP notification at the half-way point', () => (s.mcpNotes.at(-1)?.message.startsWith(where) ? true : undefined));
        const lspMid = await until('an LSP buildView at the half-way point', () => {
          const v = s.lspViews.at(-1);
          return v &&
            v.currentPath.join(' › ') ===
              refMid
                .currentPath()
                .map((l) => l.name)
                .join(' › ')
            ? v
            : undefined;
        });
        expect(lspMid.rows.map((r) => [r.path, r.instances, r.open, r.stepsDone, r.nbSteps])).toEqual(
          phaseRows(refMid, 0).map((r) => [r.path, r.instances, r.open, r.stepsDone, r.nbSteps]),
        );
        expect(lspMid.percentage).toBe(Math.min(99, Math.floor(refMid.fraction() * 100)));

        await svc.play();
        const outcome = ref.outcome!;

        // NDJSON, SSE and the hub received the events themselves: the whole view is the same.
        const ndjson = await throughNdjson(events);
        expect(comparable(ndjson.snapshot())).toEqual(comparable(ref.snapshot()));
        await until('the SSE stream to end', () => (s.sseEnded() ? true : undefined));
        expect(comparable(s.sse()!.snapshot())).toEqual(comparable(ref.snapshot()));
        const hubEnd = await until('the hub to deliver build.finished', () => (s.hub()?.outcome ? s.hub() : undefined));
        expect(comparable(hubEnd.snapshot())).toEqual(comparable(ref.snapshot()));
        const hubPageEnd = await until('the desktop page to see the end', () => (s.hubPage().outcome ? s.hubPage() : undefined));
        expect(comparable(hubPageEnd.snapshot())).toEqual(comparable(ref.snapshot()));
        const webEnd = await until('the web page to see the end', () => (s.webPage().outcome ? s.webPage() : undefined));
        expect(comparable(webEnd.snapshot())).toEqual(comparable(ref.snapshot()));
        expect(s.webErrors).toEqual([]);
        const cliEnd = await until('the CLI to see the end', () => (s.cli.view.outcome ? s.cli.view : undefined));
        expect(comparable(cliEnd.snapshot())).toEqual(comparable(ref.snapshot()));
        const site = crashSiteOf(outcome);
        expect(s.tty.statusLine()).toBe(`${outcome.status} · ${formatDuration(outcome.durationMs)}${site ? ` · ${formatCrashSite(site)}` : ''}`);
        // The taskbar: the bar is gone and, the window not focused, a notification says how it ended.
        await until('the taskbar to clear', () => (s.bar.at(-1) === -1 ? true : undefined));
        expect(s.notes.map(([title]) => title)).toEqual([`Build ${outcome.status}`]);
        // Every surface's progress figure is in [0, 1], at most what the full stream reached, and
        // 1 exactly when the build succeeded.
        for (const v of [ndjson, s.sse()!, hubEnd, hubPageEnd, webEnd, cliEnd]) {
          expect(v.fraction()).toBeLessThanOrEqual(ref.fraction() + 1e-12);
          expect(v.fraction() === 1).toBe(outcome.status === 'succeeded');
        }
        expect(figures(ref).outcome?.status).toBe(outcome.status);

        // MCP: the result's figures are the view's.
        const mcp = await s.mcp;
        const out = mcp.structuredContent as BuildResultOut;
        expect(out.status).toBe(outcome.status);
        expect(out.phases).toEqual(summarizePhases(ref, outcome.durationMs));
        expect(out.lastPhasePath).toEqual(outcome.lastPhasePath);
        const progress = s.mcpNotes.map((n) => n.progress);
        for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1]);
        expect(progress.at(-1)).toBeGreaterThanOrEqual(ref.work);
        expect(s.mcpNotes.at(-1)!.message).toBe(out.message);

        // LSP: the last buildView is the view's rows; the result carries the same crash site.
        const lsp = await s.lsp;
        expect(lsp.status).toBe(outcome.status);
        expect(lsp.lastPhasePath).toEqual(outcome.lastPhasePath);
        const lspEnd = s.lspViews.at(-1)!;
        expect(lspEnd.rows).toEqual(phaseRows(ref, ref.elapsedMs()));
        expect(lspEnd.currentPath).toEqual([]);
        expect(lspEnd.percentage).toBe(outcome.status === 'succeeded' ? 100 : Math.min(99, Math.floor(ref.fraction() * 100)));
        expect(lspEnd.outcome?.lastPhasePath).toEqual(outcome.lastPhasePath);
        const pct = s.lspReports.filter((r) => r.kind === 'report').map((r) => r.percentage ?? 0);
        for (let i = 1; i < pct.length; i++) expect(pct[i]).toBeGreaterThanOrEqual(pct[i - 1]);

        if (outcome.status === 'crashed') {
          const site = formatCrashSite(outcome.lastPhasePath!);
          expect(out.message).toContain(site);
          expect(lsp.message).toContain(site);
        }
      } finally {
        follows.mockRestore();
        await s.close();
      }
    });
  }
});
