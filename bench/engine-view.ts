// bench:engine-view — the Engine view (issue 36 item 4) on a big engine. Starts the real `serve`,
// opens the UI in Debian's Chromium, and drops a generated 10,000-layer layer JSON with its profile
// on the Engine panel (the page reads and parses it itself). Measured in the page:
//   openMs         drop → the grid shows the file's rows and a frame has been painted after
//                  (File.text, readEngineLayers, the rows, React's first render)
//   sortMs         a click on "Time ms" → the slowest-first order painted
//   filterMs       typing a name filter → the filtered rows painted
//   scroll.p50/p95/max  frame times (rAF to rAF) while the grid scrolls through all rows,
//                  400 px a frame; over33: frames longer than two frames at 60 Hz
//   rowsInDom      rows in the page while 10,000 are in the table (virtualized: a screenful)
// Prints one JSON object with `baseline` (bench/engine-view-baseline.json, ratios now / then).
// Usage: npm run bench:engine-view [-- --layers N --rounds R]
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium';
import { generateEngineFiles } from '../test/support/engine-layer-files';
import { tempDir } from '../test/support/onnx-gen';
import { compareToBaseline, type BenchName } from './baseline';

const ROOT = path.resolve(__dirname, '..', '..');
const BASELINE = [path.join(__dirname, 'engine-view-baseline.json'), path.join(ROOT, 'bench', 'engine-view-baseline.json')].find((f) => fs.existsSync(f));

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const round = (v: number) => Math.round(v * 100) / 100;

async function startServer(dir: string): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin', 'trt-build-studio.js'), 'serve', '--port', '0', '--output-dir', path.join(dir, 'engines')], {
    cwd: ROOT,
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

interface Round {
  openMs: number;
  sortMs: number;
  filterMs: number;
  frames: number[];
  rowsInDom: number;
}

/** One round in a fresh page: drop, sort, filter, scroll; timings taken in the page. */
async function round1(page: Page, url: string, files: { layers: string; profile: string }, count: number): Promise<Round> {
  await page.goto(url);
  await page.getByRole('region', { name: 'Engine layers' }).waitFor();
  // The page's code is a string: the root tsconfig has no DOM types, and it runs in the page.
  return page.evaluate(`(${PAGE_ROUND})(${JSON.stringify({ files, count })})`) as Promise<Round>;
}

/** One round in the page: drop the files on the Engine panel, sort, filter, scroll; in-page timings. */
const PAGE_ROUND = `async ({ files, count }) => {
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      /** Resolves at the start of the frame after the one in which \`ready\` first held (it has been painted). */
      const painted = async (ready) => {
        for (let i = 0; i < 100_000 && !ready(); i++) await frame();
        await frame();
        return performance.now();
      };
      const count$ = () => document.querySelector('.engine-count')?.textContent ?? '';
      const dt = new DataTransfer();
      dt.items.add(new File([files.layers], 'big.layers.json', { type: 'application/json' }));
      dt.items.add(new File([files.profile], 'big.profile.json', { type: 'application/json' }));
      const panel = document.querySelector('.engine-panel');
      const t0 = performance.now();
      panel.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      const t1 = await painted(() => count$() === \`\${count} layers\` && document.querySelectorAll('.engine-scroll [role="row"]').length > 0);
      const rowsInDom = document.querySelectorAll('.engine-scroll [role="row"]').length;

      const timeButton = [...document.querySelectorAll('button.sort')].find((b) => b.textContent?.startsWith('Time ms'));
      const firstName = () => document.querySelector('.engine-scroll [role="row"] .lname-text')?.textContent;
      const before = firstName();
      const s0 = performance.now();
      timeButton.click();
      const s1 = await painted(() => firstName() !== before);

      const input = document.querySelector('input[aria-label="Filter by name"]');
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
      const f0 = performance.now();
      setter.call(input, 'stage1');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      const f1 = await painted(() => /^[0-9]+ of /.test(count$()));
      setter.call(input, '');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await painted(() => count$() === \`\${count} layers\`);

      const scroller = document.querySelector('.engine-scroll');
      const frames = [];
      let last = await frame();
      while (scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - 1) {
        scroller.scrollTop += 400;
        const t = await frame();
        frames.push(t - last);
        last = t;
      }
      return { openMs: t1 - t0, sortMs: s1 - s0, filterMs: f1 - f0, frames, rowsInDom };
    }`;

async function main(): Promise<void> {
  const layers = arg('layers', 10_000);
  const rounds = arg('rounds', 3);
  const dir = tempDir('tbs-bench-engine-view-');
  const files = generateEngineFiles(layers);
  const { proc, url } = await startServer(dir);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--disable-renderer-backgrounding', '--disable-background-timer-throttling'] });
  const results: Round[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      results.push(await round1(page, url, files, layers));
      await page.close();
    }
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const frames = results.flatMap((r) => r.frames).sort((a, b) => a - b);
  const out = {
    layers,
    fileMiB: round((files.layers.length + files.profile.length) / 1024 / 1024),
    rounds,
    openMs: round(median(results.map((r) => r.openMs))),
    openMsEach: results.map((r) => round(r.openMs)),
    sortMs: round(median(results.map((r) => r.sortMs))),
    filterMs: round(median(results.map((r) => r.filterMs))),
    scroll: {
      frames: frames.length,
      p50: round(percentile(frames, 50)),
      p95: round(percentile(frames, 95)),
      max: round(frames[frames.length - 1] ?? NaN),
      over33: frames.filter((f) => f > 33.4).length,
    },
    rowsInDom: Math.max(...results.map((r) => r.rowsInDom)),
  };
  const baseline = BASELINE ? compareToBaseline('engine-view' as BenchName, out, BASELINE) : undefined;
  process.stdout.write(`${JSON.stringify({ ...out, ...(baseline ? { baseline } : {}) }, null, 2)}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
