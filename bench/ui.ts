// bench:ui — how the renderer holds up under a fast build. Starts the real `serve`, opens the UI
// in Debian's Chromium, uploads a generated model big enough for 5M+ callbacks, and runs a
// simulated build paced to deliver ≥100k callbacks/s. Measured in the page:
//   fps.p50 / fps.p5     per-frame rate from requestAnimationFrame timestamps during the build
//   eventToPaintMs.p99   event arrival in the page → start of the frame after the one that applied
//                        it (so it has been painted), weighted by events (apps/renderer EventPump probe);
//                        also p50/p90/p95/max, and over33Share: the share of events painted later
//                        than two frames
//   heapGrowthMiB        JS heap after forced GC, after the build minus before it
//   mainThread           the page's main thread from Build to the end, per second of stream
//                        (CDP Performance.getMetrics, no tracing): busyMsPerS (time in tasks,
//                        preemption included), cpuMsPerS (its CPU time: the figure least moved by
//                        other programs' load), script/layout/style ms per second; and the frames
//                        that ran long: rAF gaps over 33 ms (two frames) and over 50 ms, and the
//                        long animation frames Chromium reports (LoAF, over 50 ms)
// Prints one JSON object. Usage: npm run bench:ui [-- --layers N --seconds S --profile DIR]
//                                                [-- --against DIR --rounds N]
// cpuSeconds: CPU time from Build to the page's end of it: serve with its worker, the build worker
// alone (`worker`), serve's own process (`serve`), Chromium, and by process.
// --profile DIR also writes the page's CPU profile of the build (DIR/ui.cpuprofile, open it in
// Chrome DevTools), serve's (DIR/serve/*.cpuprofile) and a summary of where the page's main
// thread's time went (in the JSON, `profile`).
// --engines-from DIR puts DIR's files (engines and their manifests) in each run's output folder.
// --shot FILE saves a screenshot of the page halfway through the build (with --against, one per
// run: FILE-run-N).
// --serve-profile DIR writes serve's CPU profile only (DIR/run-N/serve/), with --against too.
// --against DIR runs a checkout of earlier code (npm ci and npm run build done there) the same
// way, alternating with ours for N rounds (default 2), and prints both sets of medians with
// ratios (`againstEarlier`), as bench:native does. Each run's serve gets a fresh cache and state.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type CDPSession, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium';
import { tempDir, writeModel } from '../test/support/onnx-gen';
import { compareToBaseline } from './baseline';
import { treeCpu } from './proc-cpu';

const ROOT = path.resolve(__dirname, '..', '..');
const ARGS = [...CHROMIUM_ARGS, '--disable-renderer-backgrounding', '--disable-background-timer-throttling'];

function strArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Share of the events (each value standing for `weight` of them) above `limit`. */
function shareOver(pairs: [number, number][], limit: number): number {
  let over = 0;
  let total = 0;
  for (const [v, w] of pairs) {
    total += w;
    if (v > limit) over += w;
  }
  return total > 0 ? over / total : NaN;
}

/** Percentile of values each standing for `weight` events. */
function weightedPercentile(pairs: [number, number][], p: number): number {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((a, [, w]) => a + w, 0);
  let acc = 0;
  for (const [v, w] of sorted) {
    acc += w;
    if (acc >= (p / 100) * total) return v;
  }
  return NaN;
}

interface PageGlobals {
  __TBS_PERF__: boolean;
  __frames: number[];
  /** Long animation frames (Chromium's LoAF entries) seen during the build, when profiling. */
  __loaf: { start: number; duration: number; styleAndLayout: number; scripts: { fn: string; src: string; duration: number }[] }[];
  __tbsPerf: { batches: [number, number][]; callbacks(): number; events(): number };
  requestAnimationFrame(cb: (t: number) => void): number;
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
/** How often the build worker's CPU time is read during a build (its figure is the last reading). */
const WORKER_SAMPLE_MS = 200;

/** What the end-of-build wait reads in the page (the root tsconfig has no DOM types). */
interface StatusQuery {
  document: { querySelector(sel: string): { textContent: string | null } | null };
}

/** Chromium's running totals for the page's main thread (seconds), from CDP Performance.getMetrics. */
async function mainThreadMetrics(cdp: CDPSession): Promise<Record<'TaskDuration' | 'ThreadTime' | 'ScriptDuration' | 'LayoutDuration' | 'RecalcStyleDuration', number>> {
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? NaN;
  return {
    TaskDuration: get('TaskDuration'),
    ThreadTime: get('ThreadTime'),
    ScriptDuration: get('ScriptDuration'),
    LayoutDuration: get('LayoutDuration'),
    RecalcStyleDuration: get('RecalcStyleDuration'),
  };
}

/** `serve` of the checkout at `root` (ours, or the earlier code's with --against). */
async function startServer(root: string, dir: string, profileDir?: string, enginesFrom?: string): Promise<{ proc: ChildProcess; url: string }> {
  const engines = path.join(dir, 'engines');
  fs.mkdirSync(engines, { recursive: true });
  // --engines-from DIR: a user's output folder that already holds engines (the engines panel lists
  // and checks them), the same files for every run; linked where the file system allows.
  for (const name of enginesFrom ? fs.readdirSync(enginesFrom) : []) {
    const src = path.join(enginesFrom!, name);
    if (!fs.statSync(src).isFile()) continue;
    try {
      fs.linkSync(src, path.join(engines, name));
    } catch {
      fs.copyFileSync(src, path.join(engines, name));
    }
  }
  // With --profile, serve's own CPU profile too (written when it exits on SIGTERM).
  const nodeArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(path.resolve(profileDir), 'serve')] : [];
  const proc = spawn(process.execPath, [...nodeArgs, path.join(root, 'bin', 'trt-build-studio.js'), 'serve', '--port', '0', '--output-dir', engines], {
    cwd: root,
    // A cache, state and output folder of its own: the form asks for reuse by default, and an
    // engine store that already holds this (deterministic) model's engine would end the build at
    // once; engines left by earlier runs would fill the page's engine list (and its checks) and
    // make runs unlike each other.
    env: { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache'), TBS_STATE_DIR: path.join(dir, 'state') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in 20 s: ${err}`)), 20_000);
    proc.stdout!.on('data', (d) => {
      out += String(d);
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    proc.on('exit', (c) => reject(new Error(`serve exited (${c}): ${err}`)));
  });
  return { proc, url };
}

async function heapUsedAfterGc(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  // Twice: the first pass can leave garbage reachable only from finalizers.
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
  await cdp.detach();
  return usedSize;
}

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
}

/**
 * Self time (ms) by trace event name on the renderer's main thread(s): what "(program)" in the
 * CPU profile was (style, layout, paint, parsing, ...). Complete events nest; a stack per thread
 * subtracts children from their parent.
 */
function traceSelfTimes(file: string, n: number): [string, number][] {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as { traceEvents: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(raw) ? raw : raw.traceEvents;
  const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map<string, TraceEvent[]>();
  for (const e of events) {
    const k = `${e.pid}:${e.tid}`;
    if (e.ph !== 'X' || e.dur === undefined || !main.has(k)) continue;
    let list = byThread.get(k);
    if (!list) byThread.set(k, (list = []));
    list.push(e);
  }
  const self = new Map<string, number>();
  for (const list of byThread.values()) {
    list.sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
    const stack: { end: number; name: string }[] = [];
    for (const e of list) {
      while (stack.length > 0 && stack[stack.length - 1].end <= e.ts) stack.pop();
      const parent = stack[stack.length - 1];
      if (parent) self.set(parent.name, (self.get(parent.name) ?? 0) - e.dur! / 1000);
      self.set(e.name, (self.get(e.name) ?? 0) + e.dur! / 1000);
      stack.push({ end: e.ts + e.dur!, name: e.name });
    }
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => [k, round(v)]);
}

/**
 * Samples the page's JavaScript (CDP Profiler) and records its long animation frames (LoAF,
 * frames over 50 ms with the scripts in them); stop() writes DIR/ui.cpuprofile and returns a
 * summary: self time by function, and the long frames' count, time in style/layout and scripts.
 */
async function startProfile(page: Page, dir: string) {
  const startedAt = await page.evaluate(() => performance.now());
  const browser = page.context().browser()!;
  const traceFile = path.join(dir, 'trace.json');
  fs.mkdirSync(dir, { recursive: true });
  await browser.startTracing(page, {
    path: traceFile,
    categories: [
      'devtools.timeline',
      'disabled-by-default-devtools.timeline',
      'v8',
      ...(process.env.TBS_TRACE_INVALIDATIONS ? ['disabled-by-default-devtools.timeline.invalidationTracking'] : []),
    ],
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
  await cdp.send('Profiler.start');
  return {
    async stop(dir: string) {
      const { profile } = (await cdp.send('Profiler.stop')) as { profile: { nodes: CpuProfileNode[]; samples: number[]; timeDeltas: number[] } };
      await cdp.detach();
      await browser.stopTracing();
      fs.writeFileSync(path.join(dir, 'ui.cpuprofile'), JSON.stringify(profile));
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const self = new Map<string, number>();
      let total = 0;
      profile.samples.forEach((id, i) => {
        const n = byId.get(id)!;
        const f = n.callFrame;
        const key = `${f.functionName || '(anonymous)'} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
        const dt = profile.timeDeltas[i] / 1000;
        total += dt;
        self.set(key, (self.get(key) ?? 0) + dt);
      });
      const loaf = await page.evaluate((from) => (globalThis as unknown as PageGlobals).__loaf.filter((f) => f.start >= from), startedAt);
      const fnTime = new Map<string, number>();
      for (const f of loaf) for (const x of f.scripts) fnTime.set(x.fn, (fnTime.get(x.fn) ?? 0) + x.duration);
      const top = <K>(m: Map<K, number>, n: number) =>
        [...m]
          .sort((a, b) => b[1] - a[1])
          .slice(0, n)
          .map(([k, v]) => [k, round(v)] as [K, number]);
      return {
        cpuProfile: path.join(dir, 'ui.cpuprofile'),
        trace: traceFile,
        mainThreadSelfMsTop: traceSelfTimes(traceFile, 20),
        sampledMs: round(total),
        selfMsTop: top(self, 25),
        longFrames: {
          count: loaf.length,
          over100ms: loaf.filter((f) => f.duration > 100).length,
          maxMs: round(Math.max(0, ...loaf.map((f) => f.duration))),
          totalMs: round(loaf.reduce((a, f) => a + f.duration, 0)),
          styleAndLayoutMs: round(loaf.reduce((a, f) => a + f.styleAndLayout, 0)),
          scriptMsTop: top(fnTime, 10),
        },
      };
    },
  };
}

interface RunOptions {
  /** The checkout whose serve (and with it, whose UI) runs. */
  root: string;
  model: string;
  layers: number;
  seconds: number;
  /** A folder for this run's serve state (engine store, predictions). */
  dir: string;
  profileDir?: string;
  /** Where serve's CPU profile goes without the page's (--serve-profile). */
  serveProfileDir?: string;
  /** Files put in this run's output folder first (--engines-from). */
  enginesFrom?: string;
  /** Where the screenshot halfway through the build goes (--shot). */
  shotFile?: string;
}

/** One build watched in the page: serve of `root`, the UI it serves, the figures of that build. */
async function runOnce(o: RunOptions) {
  const loadAtStart = round(os.loadavg()[0], 2);
  const { model, layers, seconds, profileDir } = o;
  const { proc, url } = await startServer(o.root, o.dir, profileDir ?? o.serveProfileDir, o.enginesFrom);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // A page error would otherwise only show as a build that never seems to end.
    page.on('pageerror', (e) => console.error(`bench:ui: page error: ${e.stack ?? e.message}`));
    // Dedicated workers the page started (the web host reads build streams in one): shows which
    // way this checkout's page read the stream.
    let pageWorkers = 0;
    page.on('worker', () => pageWorkers++);
    // These functions run in the page; the root tsconfig has no DOM types, hence globalThis.
    await page.addInitScript(() => {
      const w = globalThis as unknown as PageGlobals;
      w.__TBS_PERF__ = true;
      w.__frames = [];
      const tick = (t: number) => {
        w.__frames.push(t);
        w.requestAnimationFrame(tick);
      };
      w.requestAnimationFrame(tick);
      w.__loaf = [];
      // Long animation frames (over 50 ms) with the scripts in them, in every run: counting them
      // costs the page nothing between long frames.
      interface Loaf {
        startTime: number;
        duration: number;
        styleAndLayoutStart: number;
        scripts: { sourceFunctionName: string; sourceURL: string; invoker: string; duration: number }[];
      }
      const PO = (
        globalThis as unknown as { PerformanceObserver?: new (cb: (list: { getEntries(): Loaf[] }) => void) => { observe(o: { type: string; buffered: boolean }): void } }
      ).PerformanceObserver;
      try {
        new PO!((list) => {
          for (const e of list.getEntries()) {
            w.__loaf.push({
              start: e.startTime,
              duration: e.duration,
              styleAndLayout: e.styleAndLayoutStart > 0 ? e.startTime + e.duration - e.styleAndLayoutStart : 0,
              scripts: e.scripts.map((x) => ({ fn: x.sourceFunctionName || x.invoker, src: x.sourceURL, duration: x.duration })),
            });
          }
        }).observe({ type: 'long-animation-frame', buffered: false });
      } catch {
        // A Chromium without LoAF: longFrames.loaf stays 0; the rAF gaps still count.
      }
    });
    await page.goto(url);
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Open model…' }).click();
    await (await chooser).setFiles(model);
    await page.getByRole('region', { name: 'Model' }).getByText('bench.onnx').first().waitFor({ timeout: 120_000 });
    await page.getByLabel('Backend', { exact: true }).selectOption('simulated');
    await page.getByLabel('Duration (s)', { exact: true }).fill(String(seconds));
    await page.waitForTimeout(500);
    const heapBefore = await heapUsedAfterGc(page);

    const profiler = profileDir ? await startProfile(page, profileDir) : null;
    // Chromium is this process's other child (Playwright starts it from here).
    const cpuAt = () => {
      const serve = treeCpu(proc.pid!);
      const chromium = treeCpu(process.pid, [proc.pid!], false);
      return { serve: serve.total, chromium: chromium.total, byKind: { ...serve.byKind, ...chromium.byKind } };
    };
    const cpu0 = cpuAt();
    // The build worker starts with the build and exits at its end, when its time moves into
    // serve's exited children: its own figure is its last reading while alive.
    let workerCpu = 0;
    const workerSampler = setInterval(() => {
      const w = treeCpu(proc.pid!).byKind.worker;
      if (w !== undefined && w > workerCpu) workerCpu = w;
    }, WORKER_SAMPLE_MS);
    const perf = await page.context().newCDPSession(page);
    await perf.send('Performance.enable');
    const m0 = await mainThreadMetrics(perf);
    const t0 = await page.evaluate(() => performance.now());
    await page.getByRole('button', { name: 'Build', exact: true }).click();
    // --shot FILE: what the measured page looked like halfway through the build.
    const { shotFile } = o;
    const shot = shotFile ? page.waitForTimeout((seconds * 1000) / 2).then(() => page.screenshot({ path: shotFile })) : null;
    // Polled four times a second by a page function, not by a locator: a locator's wait polls
    // every animation frame (an ARIA query of the whole page each time) and would add its own
    // work to the frames being measured.
    await page.waitForFunction(
      () => /Succeeded|Failed|Crashed|Cancelled/.test((globalThis as unknown as StatusQuery).document.querySelector('[role="status"]')?.textContent ?? ''),
      undefined,
      {
        polling: 250,
        timeout: (seconds + 900) * 1000,
      },
    );
    const t1 = await page.evaluate(() => performance.now());
    await shot;
    const m1 = await mainThreadMetrics(perf);
    await perf.detach();
    const cpu1 = cpuAt();
    clearInterval(workerSampler);
    const statusText = await page.getByRole('status').textContent();
    const profile = profiler && profileDir ? await profiler.stop(profileDir) : undefined;

    const { frames, batches, pageCallbacks, pageEvents, loafs } = await page.evaluate(
      ([from, to]) => {
        const w = globalThis as unknown as PageGlobals;
        const out = {
          frames: w.__frames,
          batches: w.__tbsPerf.batches.slice(),
          pageCallbacks: w.__tbsPerf.callbacks(),
          pageEvents: w.__tbsPerf.events(),
          loafs: w.__loaf.filter((f) => f.start >= from && f.start <= to).map((f) => f.duration),
        };
        // The measurement's own arrays are not the app's memory: drop them before the heap figure.
        w.__frames = [];
        w.__tbsPerf.batches.length = 0;
        w.__loaf = [];
        return out;
      },
      [t0, t1],
    );
    // A few quiet frames after the end, then GC, for a fair heap figure.
    await page.waitForTimeout(1000);
    const heapAfter = await heapUsedAfterGc(page);

    const inBuild = frames.filter((t) => t >= t0 && t <= t1);
    const fps: number[] = [];
    for (let i = 1; i < inBuild.length; i++) fps.push(1000 / (inBuild[i] - inBuild[i - 1]));
    const gaps = fps.map((f) => 1000 / f);
    fps.sort((a, b) => a - b);

    const token = new URL(url).searchParams.get('token');
    const builds = (await (await fetch(new URL('/api/builds', url), { headers: { authorization: `Bearer ${token}` } })).json()) as Array<{
      lastSeq: number;
      state: string;
      outcome?: { durationMs: number };
    }>;
    const rec = builds[builds.length - 1];
    const durationMs = rec.outcome?.durationMs ?? NaN;
    const pageS = (t1 - t0) / 1000;

    return {
      bench: 'ui',
      chromium: (await browser.version()).toString(),
      model: { layers, fileMiB: round(fs.statSync(model).size / 2 ** 20, 2) },
      build: {
        state: rec.state,
        status: statusText?.trim(),
        // TensorRT-equivalent callbacks (start + steps + finish per phase) the page accounted for.
        callbacks: pageCallbacks,
        durationS: round(durationMs / 1000, 2),
        callbacksPerSec: Math.round(pageCallbacks / (durationMs / 1000)),
        // Protocol events (steps coalesced natively) and how fast they reached the page.
        events: pageEvents,
        serverEvents: rec.lastSeq + 1,
        pageReceiveS: round(pageS, 2),
        // The page's time to see the whole build over the build's own: 1 is a page that keeps up.
        pageOverBuild: round(pageS / (durationMs / 1000), 2),
        callbacksPerSecAtPage: Math.round(pageCallbacks / pageS),
        eventsPerSecAtPage: Math.round(pageEvents / pageS),
        pageWorkers,
      },
      // CPU seconds the processes used from Build to the page's end of it: serve with its build
      // worker, and Chromium (all its processes). What the build costs the machine, a figure
      // that holds when other programs' load makes wall-clock rates drift.
      cpuSeconds: {
        serveAndWorker: round(cpu1.serve - cpu0.serve),
        // The build worker alone (sampled while it lived), and serve's own process without it.
        worker: round(workerCpu),
        serve: round((cpu1.byKind.node ?? 0) - (cpu0.byKind.node ?? 0)),
        chromium: round(cpu1.chromium - cpu0.chromium),
        perBuildSecond: round((cpu1.serve - cpu0.serve + cpu1.chromium - cpu0.chromium) / (durationMs / 1000), 2),
        // By process (Chromium's by --type; a process that ended during the build counts in its parent).
        byProcess: Object.fromEntries(Object.entries(cpu1.byKind).map(([k, v]) => [k, round(v - (cpu0.byKind[k] ?? 0))])),
      },
      fps: {
        p50: round(percentile(fps, 50)),
        p5: round(percentile(fps, 5)),
        frames: fps.length,
      },
      // The page's main thread over the stream: what the page's own work costs, and how often
      // it ran long. Per second of the page's time from Build to the end.
      mainThread: {
        busyMsPerS: round(((m1.TaskDuration - m0.TaskDuration) * 1000) / pageS),
        cpuMsPerS: round(((m1.ThreadTime - m0.ThreadTime) * 1000) / pageS),
        // The same CPU time per event the page applied: steadier than per second when other
        // programs' load slows the build itself (fewer events a second, the same work each).
        cpuUsPerEvent: round(((m1.ThreadTime - m0.ThreadTime) * 1e6) / Math.max(1, pageEvents), 2),
        scriptMsPerS: round(((m1.ScriptDuration - m0.ScriptDuration) * 1000) / pageS),
        layoutMsPerS: round(((m1.LayoutDuration - m0.LayoutDuration) * 1000) / pageS),
        styleMsPerS: round(((m1.RecalcStyleDuration - m0.RecalcStyleDuration) * 1000) / pageS),
        longFrames: {
          over33ms: gaps.filter((g) => g > 33.4).length,
          over50ms: gaps.filter((g) => g > 50).length,
          over100ms: gaps.filter((g) => g > 100).length,
          msOver33: round(gaps.filter((g) => g > 33.4).reduce((a, g) => a + g, 0)),
          loaf: loafs.length,
          loafMs: round(loafs.reduce((a, d) => a + d, 0)),
        },
      },
      eventToPaintMs: {
        p50: round(weightedPercentile(batches, 50)),
        p90: round(weightedPercentile(batches, 90)),
        p95: round(weightedPercentile(batches, 95)),
        p99: round(weightedPercentile(batches, 99)),
        max: round(Math.max(...batches.map(([v]) => v))),
        // Share of the events painted later than two frames (the p99 target says: under 0.01).
        over33Share: round(shareOver(batches, 33.4), 4),
      },
      heapGrowthMiB: round((heapAfter - heapBefore) / 2 ** 20, 2),
      heapMiB: { before: round(heapBefore / 2 ** 20, 2), after: round(heapAfter / 2 ** 20, 2) },
      targets: { fpsP5: '>= 30', eventToPaintP99Ms: '<= 33', heapGrowthMiB: '< 20', callbacks: '>= 5,000,000', callbacksPerSec: '>= 100,000', pageOverBuild: '<= 1.2' },
      note: 'Shared 2-core machine: absolute figures drift with load.',
      machine: { cpus: os.cpus().length, loadavg1AtStart: loadAtStart, loadavg1AtEnd: round(os.loadavg()[0], 2) },
      ...(profile ? { profile } : {}),
    };
  } finally {
    await browser.close();
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }
}

type RunFigures = Awaited<ReturnType<typeof runOnce>>;

/** The figures --against puts side by side (paths in a run's JSON), and which way is better. */
const AGAINST_FIGURES: [string, 'lower' | 'higher'][] = [
  ['eventToPaintMs.p50', 'lower'],
  ['eventToPaintMs.p95', 'lower'],
  ['eventToPaintMs.p99', 'lower'],
  ['eventToPaintMs.max', 'lower'],
  ['eventToPaintMs.over33Share', 'lower'],
  ['fps.p50', 'higher'],
  ['fps.p5', 'higher'],
  ['mainThread.busyMsPerS', 'lower'],
  ['mainThread.cpuMsPerS', 'lower'],
  ['mainThread.cpuUsPerEvent', 'lower'],
  ['mainThread.scriptMsPerS', 'lower'],
  ['mainThread.layoutMsPerS', 'lower'],
  ['mainThread.longFrames.over33ms', 'lower'],
  ['mainThread.longFrames.over50ms', 'lower'],
  ['mainThread.longFrames.loaf', 'lower'],
  ['heapGrowthMiB', 'lower'],
  ['build.durationS', 'lower'],
  ['build.pageReceiveS', 'lower'],
  ['build.pageOverBuild', 'lower'],
  ['build.eventsPerSecAtPage', 'higher'],
  ['cpuSeconds.serveAndWorker', 'lower'],
  ['cpuSeconds.worker', 'lower'],
  ['cpuSeconds.serve', 'lower'],
  ['cpuSeconds.chromium', 'lower'],
  ['cpuSeconds.perBuildSecond', 'lower'],
];

function figureAt(run: unknown, dotted: string): number {
  let cur: unknown = run;
  for (const k of dotted.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[k];
  return typeof cur === 'number' ? cur : NaN;
}

function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length === 0 ? NaN : v[Math.floor(v.length / 2)];
}

/** One line per run for the JSON: enough to see the spread behind the medians. */
function runLine(r: RunFigures) {
  return {
    state: r.build.state,
    durationS: r.build.durationS,
    pageReceiveS: r.build.pageReceiveS,
    eventToPaintMs: r.eventToPaintMs,
    fps: { p50: r.fps.p50, p5: r.fps.p5 },
    mainThread: {
      busyMsPerS: r.mainThread.busyMsPerS,
      cpuMsPerS: r.mainThread.cpuMsPerS,
      cpuUsPerEvent: r.mainThread.cpuUsPerEvent,
      over33ms: r.mainThread.longFrames.over33ms,
      over50ms: r.mainThread.longFrames.over50ms,
    },
    heapGrowthMiB: r.heapGrowthMiB,
    cpuSeconds: r.cpuSeconds,
    loadavg1: [r.machine.loadavg1AtStart, r.machine.loadavg1AtEnd],
  };
}

async function main(): Promise<void> {
  // 10,000 one-channel blocks: a ~3 MB model whose simulated build makes ~5.5M callbacks
  // (measured: 2,000 blocks → 1.09M); paced to 30 s, that is ~180k callbacks/s at the source.
  const layers = arg('layers', 10_000);
  const seconds = arg('seconds', 30);
  const against = strArg('against');
  const rounds = Math.max(1, Math.floor(arg('rounds', 2)));
  const dir = tempDir('tbs-bench-ui-');
  const model = writeModel(path.join(dir, 'bench.onnx'), { layers, channels: 1 });
  let n = 0;
  // --serve-profile DIR: serve's CPU profile only (DIR/run-N/serve/), in any mode, --against too.
  const serveProfile = strArg('serve-profile');
  const enginesFrom = strArg('engines-from');
  // --shot FILE: with --against, one per run (FILE's name with -run-N before its extension).
  const shot = strArg('shot');
  const shotFor = (k: number) => (shot && against ? shot.replace(/(\.[^./]*)?$/, `-run-${k}$1`) : shot);
  const run = (root: string, profileDir?: string) => {
    const runDir = path.join(dir, `run-${++n}`);
    const serveProfileDir = serveProfile && path.join(path.resolve(serveProfile), `run-${n}`);
    return runOnce({ root, model, layers, seconds, dir: runDir, profileDir, serveProfileDir, enginesFrom, shotFile: shotFor(n) });
  };
  try {
    if (!against) {
      const result = await run(ROOT, strArg('profile'));
      console.log(JSON.stringify({ ...result, baseline: compareToBaseline('ui', result) }, null, 2));
      return;
    }
    // The earlier code (another checkout, built there: its serve serves its own UI) and ours
    // take turns, the first of each round alternating, so both meet the same machine load.
    const earlierRoot = path.resolve(against);
    for (const f of ['bin/trt-build-studio.js', 'dist/renderer/index.html']) {
      if (!fs.existsSync(path.join(earlierRoot, f))) throw new Error(`--against ${against}: ${f} missing (npm ci and npm run build in that checkout first)`);
    }
    const ours: RunFigures[] = [];
    const earlier: RunFigures[] = [];
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        earlier.push(await run(earlierRoot));
        ours.push(await run(ROOT));
      } else {
        ours.push(await run(ROOT));
        earlier.push(await run(earlierRoot));
      }
    }
    const figures: Record<string, { ours: number; earlier: number; ratio: number | null; better: string }> = {};
    for (const [name, better] of AGAINST_FIGURES) {
      const o = median(ours.map((r) => figureAt(r, name)));
      const e = median(earlier.map((r) => figureAt(r, name)));
      figures[name] = { ours: o, earlier: e, ratio: e === 0 || !Number.isFinite(o / e) ? null : round(o / e, 3), better };
    }
    // The run printed in full is ours with the median event-to-paint tail.
    const byTail = [...ours].sort((a, b) => a.eventToPaintMs.p99 - b.eventToPaintMs.p99);
    const result = {
      ...byTail[Math.floor(byTail.length / 2)],
      againstEarlier: {
        checkout: earlierRoot,
        rounds,
        note: 'medians of alternating runs (earlier first in odd rounds) in this run; ratio = ours / earlier',
        figures,
        runs: { ours: ours.map(runLine), earlier: earlier.map(runLine) },
      },
    };
    console.log(JSON.stringify({ ...result, baseline: compareToBaseline('ui', result) }, null, 2));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
