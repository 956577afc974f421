#!/usr/bin/env node
// npm run bench:native — prints ONE JSON object:
//   callbackCostNs.threads{1,8}.{ours,naive}.{p50,p99,max}: per-callback cost, our pipeline vs the
//     tutorial monitor (mutex + map + render the whole tree as ANSI + write to /dev/null), same run
//     (native/bench/bench_callbacks.cc, built by npm run build:native); oursStartFinish: the
//     phaseStart/phaseFinish calls alone; withCrashRecord(StartFinish): the same with the crash
//     record kept (a memory-mapped file written on every phaseStart/phaseFinish);
//   sustainedCallbacksPerSec: 8 producer threads flat out through the pipeline (C++), callbacks
//     over the producers' time; sustainedDrainedCallbacksPerSec: over the producers' time plus
//     finish(), which emits whatever the flusher had not caught up with (sustainedFinishMs): a
//     pipeline whose queues grow without bound scores high on the first and low on the second;
//   sustainedHelpedFlushes/HelpedFlushMs: flushes builder threads ran in the flusher's place once
//     it was maxQueuedRecords behind; sustainedFlushLockWaits/WaitedMs: how often one found such a
//     flush running and waited for its end (one chunk), and how long in all (summed over threads);
//     sustainedPeakQueuedRecords: the record queues' high-water mark seen by those looks;
//   clockReadsTsc: whether the native clock reads the TSC (core/clock.h) or steady_clock;
//   maxProducerWaitUs: the longest single callback seen with 8 threads (includes preemption);
//   againstEarlier (with -- --against DIR, a checkout of earlier code built there): its C++
//     benchmark and ours alternately, three rounds each, medians side by side with the ratio;
//     toLastEventDelivered: the sustained storm timed until finish() returns, both pipelines
//     (native/bench/storm_drain.cc, compiled here against each checkout: needs a C++ compiler);
//   (TBS_BENCH_SUSTAINED sets the sustained run's callbacks, 20 M by default: fewer on a loaded machine);
//   baseline: bench/baseline.json's figures beside these, with ratios (bench/baseline.ts);
//   memory: 10 million callbacks from 8 threads through the real addon (pipeline, thread-safe
//     function, batches delivered to a JS callback); RSS at start (after a warm-up build), peak
//     and end; memory.withProtocolObjects: the same run also decoding into protocol objects.
//     What grew (2026-12-07, glibc malloc_stats per arena sampled during the run): not live
//     memory (malloc's in-use bytes were the same before and after) but freed memory malloc kept:
//     (1) a new ArrayBuffer per batch for its numbers, up to 128 KiB each, malloc'd on the JS
//     thread and freed only when V8 collected it: 275 MB through the main arena over the run,
//     up to 31 MiB at once, ~25 MiB of it kept as RSS; now one buffer per JS environment
//     (native/src/addon/build_job.cc batchNumbers); (2) the build threads' arenas keeping what a
//     busy moment held (the outbox while JS lags, the queues' chunks, the flushes' batches): now
//     returned by malloc_trim(0) when a build's job is destroyed. The growth is not proportional
//     to the callbacks (1 M, 3 M and 10 M grew alike: a high-water, not a leak), and on a loaded
//     machine JS lags and the outbox fills towards its bound, so one run says little: compare
//     alternating runs.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const addonFile = process.env.TBS_ADDON_PATH || path.join(root, 'build', 'native', 'Release', 'trt_build_studio.node');
const benchExe = path.join(root, 'build', 'native', 'tbs_bench_callbacks');
const MEMORY_CALLBACKS = 10_000_000;
// Paced so that JS keeps up: every start and finish is delivered (never dropped), so producers
// running flat out for 10 M callbacks would measure the backlog, not the pipeline's own memory.
const MEMORY_RATE = Number(process.env.TBS_BENCH_MEMORY_RATE || 500_000);
const MiB = 1024 * 1024;
// Callbacks of the sustained-throughput run (8 producers flat out).
const SUSTAINED_CALLBACKS = Number(process.env.TBS_BENCH_SUSTAINED || 20_000_000);
// With --against DIR: rounds of (earlier, ours) alternating.
const AGAINST_ROUNDS = 3;

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function fail(msg) {
  console.error(`bench:native: ${msg}`);
  process.exit(1);
}

// Child mode: the memory run, in a fresh process started with --expose-gc. `decode` also turns
// every batch into protocol event objects (addon.ts BatchDecoder, from dist/): that adds V8 heap
// capacity the engine keeps after GC, so it is reported separately from the pipeline's own.
async function memoryRun(decode) {
  const addon = require(addonFile);
  let BatchDecoder;
  if (decode) {
    try {
      ({ BatchDecoder } = require(path.join(root, 'dist', 'apps', 'worker', 'addon.js')));
    } catch {
      fail('dist/apps/worker/addon.js missing: run npm run build:ts');
    }
  }
  // One storm build through the addon; onBatch(eventCount, strings) per delivered batch.
  const runStorm = (callbacks, onBatch) =>
    new Promise((resolve) => {
      const decoder = BatchDecoder ? new BatchDecoder('bench', {}) : undefined;
      addon.startBuild(
        { buildId: 'bench', backend: 'storm', outputPath: '', stormCallbacks: callbacks, stormRate: MEMORY_RATE, simThreads: 8, heartbeatMs: 1000 },
        (nums, strs, names, firstNameId) => {
          let last;
          if (decoder) {
            const evs = decoder.decode(nums, strs, names, firstNameId);
            last = evs.at(-1)?.type === 'build.finished';
            onBatch(evs.length, strs);
          } else {
            last = nums[nums.length - 8] === 8;
            onBatch(nums.length / 8, strs);
          }
          if (last) resolve();
        },
      );
    });
  const rssBeforeAnyBuild = process.memoryUsage().rss;
  // Warm-up build (200 k callbacks) so that one-time costs (V8 young-generation sizing, malloc
  // arenas of the producer threads, code) are not counted as growth across the 10 M.
  await runStorm(200_000, () => {});
  global.gc?.();
  await new Promise((r) => setTimeout(r, 100));
  global.gc?.();
  const rssStart = process.memoryUsage().rss;
  let rssPeak = rssStart;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
  let events = 0;
  let batches = 0;
  let stormLine = '';
  const t0 = process.hrtime.bigint();
  await runStorm(MEMORY_CALLBACKS, (evs, strs) => {
    batches++;
    events += evs;
    for (const s of strs) if (s.startsWith('storm:')) stormLine = s;
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  global.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  global.gc?.();
  const rssEnd = process.memoryUsage().rss;
  const m = /storm: (\d+) callbacks in (\d+) ns/.exec(stormLine);
  const callbacks = m ? Number(m[1]) : MEMORY_CALLBACKS;
  process.stdout.write(
    JSON.stringify({
      callbacks,
      rssBeforeWarmupMiB: +(rssBeforeAnyBuild / MiB).toFixed(1),
      rssStartMiB: +(rssStart / MiB).toFixed(1),
      rssEndMiB: +(rssEnd / MiB).toFixed(1),
      rssPeakMiB: +(rssPeak / MiB).toFixed(1),
      eventsDeliveredToJs: events,
      batchesDeliveredToJs: batches,
      convertedToProtocolObjects: Boolean(BatchDecoder),
      producerCallbacksPerSec: m ? Math.round(callbacks / (Number(m[2]) / 1e9)) : undefined,
      endToEndSeconds: +seconds.toFixed(2),
      pacedCallbacksPerSec: MEMORY_RATE,
    }),
  );
}

/**
 * The sustained storm timed until finish() returns (native/bench/storm_drain.cc), built here with
 * the C++ compiler against the earlier checkout's headers and core library and against ours, run
 * alternately: what each pipeline delivers per second of wall time. The producers' rate alone
 * (sustainedCallbacksPerSec) flatters a pipeline whose record queues grow without bound: its
 * builder threads never wait, and its finish() then drains seconds of backlog.
 */
function drainedAgainst(checkout) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tbs-bench-drain-'));
  try {
    const build = (src, out) => {
      const lib = path.join(src, 'build', 'native', 'libtbs_core.a');
      if (!existsSync(lib)) fail(`${lib} missing (build that checkout first)`);
      const args = ['-O3', '-DNDEBUG', '-std=c++17', '-pthread', '-I', path.join(src, 'native', 'src'), path.join(root, 'native', 'bench', 'storm_drain.cc'), lib, '-o', out];
      const r = spawnSync(process.env.CXX || 'c++', args, { encoding: 'utf8', timeout: 300_000 });
      if (r.status !== 0) fail(`compiling native/bench/storm_drain.cc against ${src}: ${r.stderr || r.error}`);
      return out;
    };
    const exes = { earlier: build(checkout, path.join(dir, 'earlier')), ours: build(root, path.join(dir, 'ours')) };
    const runs = { earlier: [], ours: [] };
    for (let i = 0; i < AGAINST_ROUNDS; i++) {
      for (const who of ['earlier', 'ours']) {
        const r = spawnSync(exes[who], [String(SUSTAINED_CALLBACKS)], { encoding: 'utf8', timeout: 600_000 });
        if (r.status !== 0) fail(`storm_drain (${who}) failed: ${r.stderr || r.error}`);
        runs[who].push(JSON.parse(r.stdout));
      }
    }
    const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
    const figure = (key) => {
      const o = med(runs.ours.map((r) => r[key]));
      const t = med(runs.earlier.map((r) => r[key]));
      return { ours: +o.toFixed(1), earlier: +t.toFixed(1), ratio: +(o / t).toFixed(3) };
    };
    return {
      note: 'the sustained storm (8 producers, flusher running) timed until finish() returned: callbacks per second of wall time to the last event delivered; medians of alternating runs',
      deliveredCallbacksPerSec: figure('deliveredCallbacksPerSec'),
      producerCallbacksPerSec: figure('producerCallbacksPerSec'),
      finishMs: figure('finishMs'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main() {
  if (!existsSync(addonFile) || !existsSync(benchExe))
    fail(`build the addon and the benchmark first: npm run build:native (missing ${existsSync(addonFile) ? benchExe : addonFile})`);
  const runCpp = (exe) => {
    const cpp = spawnSync(exe, [String(SUSTAINED_CALLBACKS)], { encoding: 'utf8', timeout: 600_000 });
    if (cpp.status !== 0) fail(`${exe} failed: ${cpp.stderr || cpp.error}`);
    return JSON.parse(cpp.stdout);
  };
  const against = argValue('--against');
  let result;
  if (against) {
    // The earlier code's benchmark (another checkout, built there) and ours take turns, so both
    // meet the same machine load; the medians go side by side.
    const otherExe = path.join(path.resolve(against), 'build', 'native', 'tbs_bench_callbacks');
    if (!existsSync(otherExe)) fail(`--against ${against}: ${otherExe} missing (build that checkout first)`);
    const ours = [];
    const theirs = [];
    for (let i = 0; i < AGAINST_ROUNDS; i++) {
      theirs.push(runCpp(otherExe));
      ours.push(runCpp(benchExe));
    }
    const median = (runs, pick) => {
      const v = runs.map(pick).sort((a, b) => a - b);
      return v[Math.floor(v.length / 2)];
    };
    result = ours[Math.floor(ours.length / 2)];
    const figure = (pick) => {
      const o = median(ours, pick);
      const t = median(theirs, pick);
      return { ours: +o.toFixed(1), earlier: +t.toFixed(1), ratio: +(o / t).toFixed(3) };
    };
    result.againstEarlier = {
      checkout: path.resolve(against),
      rounds: AGAINST_ROUNDS,
      note: 'medians of alternating runs of both benchmarks in this run; ratio = ours / earlier',
      sustainedCallbacksPerSec: figure((r) => r.sustainedCallbacksPerSec),
      callbackP50NsThreads8: figure((r) => r.callbackCostNs.threads8.ours.p50),
      callbackP50NsThreads1: figure((r) => r.callbackCostNs.threads1.ours.p50),
      callbackP99NsThreads8: figure((r) => r.callbackCostNs.threads8.ours.p99),
      maxProducerWaitUs: figure((r) => r.maxProducerWaitUs),
    };
    // Figures the earlier benchmark may predate: side by side only where both report them.
    const both = (pick) => [...ours, ...theirs].every((r) => typeof pick(r) === 'number');
    if (both((r) => r.sustainedDrainedCallbacksPerSec)) {
      result.againstEarlier.sustainedDrainedCallbacksPerSec = figure((r) => r.sustainedDrainedCallbacksPerSec);
    }
    result.againstEarlier.toLastEventDelivered = drainedAgainst(path.resolve(against));
  } else {
    result = runCpp(benchExe);
  }
  const child = (mode) => {
    const r = spawnSync(process.execPath, ['--expose-gc', __filename, mode], { encoding: 'utf8', timeout: 180_000 });
    if (r.status !== 0) fail(`memory run (${mode}) failed: ${r.stderr || r.error}`);
    return JSON.parse(r.stdout);
  };
  result.memory = child('--memory-child');
  if (existsSync(path.join(root, 'dist', 'apps', 'worker', 'addon.js'))) result.memory.withProtocolObjects = child('--memory-child-decode');
  const t8 = result.callbackCostNs.threads8;
  result.targets = {
    p50AtLeast20xCheaperWith8Threads: t8.naive.p50 / t8.ours.p50 >= 20,
    // Issue 26: a callback's p50 back to the 40 ns measured before the build view landed.
    callbackP50AtMost40Ns: t8.ours.p50 <= 40 && result.callbackCostNs.threads1.ours.p50 <= 40,
    sustainedAtLeast5M: result.sustainedCallbacksPerSec >= 5e6,
    rssGrowthUnder20MiB: result.memory.rssEndMiB - result.memory.rssStartMiB < 20,
  };
  result.machine = { cpus: os.cpus().length, loadavg1: +os.loadavg()[0].toFixed(2), node: process.version };
  // The previous figures (bench/baseline.json) beside these, with ratios (bench/baseline.ts).
  try {
    result.baseline = require(path.join(root, 'dist', 'bench', 'baseline.js')).compareToBaseline('native', result);
  } catch (e) {
    result.baseline = { error: `no comparison (run npm run build:ts): ${e.message}` };
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

if (process.argv.includes('--memory-child') || process.argv.includes('--memory-child-decode')) {
  memoryRun(process.argv.includes('--memory-child-decode')).catch((e) => fail(e.stack || String(e)));
} else {
  main();
}
