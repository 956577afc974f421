#!/usr/bin/env node
// A screenshot tour of the web UI in every state, at a laptop size (1280×800) and a small window
// (900×700): idle, model open, a dynamic model needing shapes (Build disabled with the reason),
// building (with a predicted end once earlier builds exist), a long silence, stopping, cancelled
// (in the small window also the timeline's tab), succeeded (a big build, every row
// finished, and a small one), with a timing cache, failed, crashed, crashed mid-phase (the crash
// site in the tree, then the full message opened from the status line), and the form under
// TensorRT 11.1 emulation. It starts real `serve` processes
// (simulated backend), drives Debian's Chromium, and writes PNGs for a person to look at.
//
//   npm run build:ts && npm run build:renderer && node scripts/ui-tour.js [out-dir]
//
// out-dir defaults to e2e/artifacts/ui-tour (ignored by git). TBS_TOUR_SIZES=1280x800 limits the sizes;
// TBS_TOUR_SKIP_SILENCE=1 skips the 35 s long-silence shot. The 10.x tour shows a GPU figure from
// the fake NVML in build/native/gpu-fakes (a real GPU figure needs TensorRT on a GPU machine).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const root = path.resolve(__dirname, '..');
for (const f of ['dist/test/support/onnx-gen.js', 'dist/renderer/index.html']) {
  if (!fs.existsSync(path.join(root, f))) {
    console.error(`ui-tour: ${f} is missing; run \`npm run build:ts && npm run build:renderer\` first`);
    process.exit(2);
  }
}
const { chromium } = require('@playwright/test');
const { CHROMIUM_ARGS, CHROMIUM_PATH } = require(path.join(root, 'dist/test/support/chromium.js'));
const { writeModel, writeBadFile } = require(path.join(root, 'dist/test/support/onnx-gen.js'));

const out = path.resolve(process.argv[2] || path.join(root, 'e2e', 'artifacts', 'ui-tour'));
const sizes = (process.env.TBS_TOUR_SIZES || '1280x800,900x700').split(',').map((s) => s.split('x').map(Number));
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-tour-'));
const servers = [];

/** `serve` on a free port with a fixed token; its state directory (build history) and engines folder are the tour's own. */
async function startServe(name, env = {}) {
  const token = `tour${Math.random().toString(36).slice(2)}`;
  const child = spawn(process.execPath, [path.join(root, 'bin', 'trt-build-studio.js'), 'serve', '--port', '0', '--token', token, '--output-dir', path.join(scratch, `engines-${name}`)], {
    cwd: scratch,
    env: { ...process.env, TBS_STATE_DIR: path.join(scratch, `state-${name}`), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  servers.push(child);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`serve (${name}) printed no URL in 20 s:\n${stderr}`)), 20_000);
    child.stdout.on('data', (d) => {
      text += String(d);
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve (${name}) exited with ${code}:\n${stderr}`));
    });
  });
}

async function stopServers() {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise((resolve) => {
          if (s.exitCode !== null || s.signalCode !== null) return resolve();
          const timer = setTimeout(() => s.kill('SIGKILL'), 10_000);
          s.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          s.kill('SIGTERM');
        }),
    ),
  );
}

function tourPage(page, tag) {
  const status = page.getByRole('status');
  const button = (name) => page.getByRole('button', { name, exact: true });
  const label = (name) => page.getByLabel(name, { exact: true });
  return {
    page,
    status,
    button,
    label,
    async shot(name) {
      const file = path.join(out, `${tag}-${name}.png`);
      await page.screenshot({ path: file });
      // What a reviewer should check besides the picture: nothing may overflow sideways.
      const overflow = await page.evaluate(() => {
        const bad = [];
        for (const el of document.querySelectorAll('.panel, .statusbar, .toolbar')) {
          if (el.scrollWidth > el.clientWidth + 1) bad.push(`${el.className.split(' ').slice(0, 2).join('.')} +${el.scrollWidth - el.clientWidth}px`);
        }
        if (document.documentElement.scrollWidth > window.innerWidth) bad.push(`page +${document.documentElement.scrollWidth - window.innerWidth}px`);
        return bad;
      });
      console.log(`${path.relative(root, file)}${overflow.length ? `  OVERFLOW: ${overflow.join(', ')}` : ''}`);
    },
    async open(file) {
      const chooser = page.waitForEvent('filechooser');
      await button('Open model…').click();
      await (await chooser).setFiles(file);
      await page.getByRole('region', { name: 'Model' }).getByText(path.basename(file)).first().waitFor();
    },
    async sim({ duration, fault = '', phase } = {}) {
      await label('Backend').selectOption('simulated');
      // Each build here is watched running: an identical earlier build must not be reused.
      await label('Reuse an up-to-date engine').uncheck();
      if (duration !== undefined) await label('Duration (s)').fill(String(duration));
      await label('Fault').selectOption(fault);
      if (fault && phase) await label('…at phase').fill(phase);
    },
    async build(until) {
      // The previous build's outcome stays on screen until the new one starts: wait for that.
      const previous = await page.locator('.statusbar .state').textContent();
      await button('Build').click();
      if (previous !== 'Building') await page.locator('.statusbar .state').filter({ hasNotText: previous }).waitFor({ timeout: 30_000 });
      if (until) await status.getByText(until, { exact: true }).waitFor({ timeout: 60_000 });
      await page.waitForTimeout(300);
    },
  };
}

async function tour(browser, url, models, [w, h]) {
  const tag = `${w}x${h}`;
  const ctx = await browser.newContext({ viewport: { width: w, height: h } });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => console.error(`  pageerror: ${e.message}`));
  await page.goto(url);
  const t = tourPage(page, tag);
  await t.status.getByText('Idle').waitFor();
  await t.shot('01-idle');

  await t.open(models.small);
  await t.shot('02-model-open');

  await t.open(models.dynamic);
  // A dynamic input: one shape field (left empty, each dynamic dimension is built as 1, as trtexec does).
  await t.label('input shape').waitFor();
  await t.shot('03-dynamic-shape-field');
  // min:opt:max typed as people write them, with opt above max: the reason beside the field.
  await t.label('input shape').fill('1x3x224x224:8x3x224x224:4x3x224x224');
  await page.locator('#build-blocker').waitFor();
  await t.shot('04-dynamic-shape-error-as-you-type');

  // Earlier identical builds give the service a basis for the predicted end.
  await t.open(models.big);
  // Long enough that Stop still finds it running on a busy machine.
  await t.sim({ duration: 8 });
  await t.build('Succeeded');
  await t.build('Succeeded');
  await t.build('Building');
  // A busy machine may take a while to start the worker: wait for a tree worth showing.
  await page.waitForFunction(() => document.querySelectorAll('[role="treeitem"]').length >= 8, undefined, { timeout: 30_000 });
  await page.waitForTimeout(1000);
  await t.shot('05-building');
  await t.button('Stop').click();
  await t.shot('06-stopping');
  await t.status.getByText('Cancelled', { exact: true }).waitFor({ timeout: 30_000 });
  await t.shot('07-cancelled');
  if (await page.getByRole('tab', { name: 'Timeline' }).isVisible()) {
    // The small window's tabs: the timeline, then back to the log.
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await t.shot('07a-cancelled-timeline-tab');
    await page.getByRole('tab', { name: 'Log' }).click();
  }

  await t.sim({ duration: 3 });
  await t.build('Succeeded');
  await t.shot('07b-succeeded-big-build');

  await t.open(models.small);
  await t.sim({ duration: 1 });
  await t.label('Timing cache file').fill(path.join(scratch, `timing-${tag}.cache`));
  await t.build('Succeeded');
  await t.shot('08-succeeded');
  await t.build('Succeeded');
  await t.shot('09-succeeded-with-timing-cache');

  await t.label('Timing cache file').fill('');
  await t.sim({ duration: 1, fault: 'fail' });
  await t.build('Failed');
  await t.shot('10-failed');
  await t.sim({ duration: 1, fault: 'crash' });
  await t.build('Crashed');
  await t.shot('11-crashed');
  // Crashed mid-phase, deep in a big build: the crash site in the tree, a crash line in the log,
  // the status line's short form, then its full text.
  await t.open(models.big);
  await t.sim({ duration: 3, fault: 'crash', phase: 'Timing graph nodes' });
  await t.build('Crashed');
  await t.shot('11b-crashed-mid-phase');
  const detail = page.locator('.statusbar button.detail');
  if (await detail.count()) {
    await detail.click();
    await t.shot('11c-crashed-full-message');
    await detail.click();
  }

  if (!process.env.TBS_TOUR_SKIP_SILENCE) {
    await t.sim({ duration: 3, fault: 'hang', phase: 'Timing graph nodes' });
    await t.build('Building');
    await t.status.getByText(/last TensorRT callback 3\d s ago/).waitFor({ timeout: 90_000 });
    await t.shot('12-long-silence');
    await t.button('Stop').click();
    await t.shot('13-stopping-a-silent-builder');
    // A second Stop kills the worker if the first did not end the build.
    if (await t.button('Stop').isEnabled()) await t.button('Stop').click().catch(() => undefined);
    await t.status.getByText(/Cancelled|Crashed/).waitFor({ timeout: 30_000 });
  }
  await t.open(models.bad).catch(() => undefined);
  await page.getByRole('alert').waitFor();
  await t.shot('14-bad-model');
  await ctx.close();
}

async function tour11(browser, url, models, [w, h]) {
  const ctx = await browser.newContext({ viewport: { width: w, height: h } });
  const page = await ctx.newPage();
  await page.goto(url);
  const t = tourPage(page, `${w}x${h}`);
  // The form follows the backends' TensorRT version, which arrives after the page loads.
  await page.getByText('The simulator behaves as TensorRT 11.1.0', { exact: false }).waitFor({ timeout: 30_000 });
  await t.open(models.dynamic);
  await page.getByRole('heading', { name: 'Build options' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
  await t.shot('15-trt11-form');
  await page.locator('.col-left').evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await t.shot('16-trt11-form-scrolled');
  await ctx.close();
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const dir = path.join(scratch, 'models');
  fs.mkdirSync(dir);
  const models = {
    small: writeModel(path.join(dir, 'small.onnx'), { layers: 4 }),
    big: writeModel(path.join(dir, 'resnet-like.onnx'), { layers: 300 }),
    dynamic: writeModel(path.join(dir, 'dynamic.onnx'), { layers: 4, dynamic: true }),
    bad: writeBadFile(path.join(dir, 'notes.onnx'), 'text'),
  };
  // The GPU figure comes from the fake NVML built beside the addon (native/test/fake_nvml.cc),
  // turned on for the simulated backend, so the tour shows how a GPU-busy silence reads.
  const fakes = path.join(root, 'build', 'native', 'gpu-fakes');
  const gpu = fs.existsSync(path.join(fakes, 'libnvidia-ml.so.1'))
    ? { TBS_GPU_PROBE: 'always', TBS_NVML_LIB: path.join(fakes, 'libnvidia-ml.so.1'), TBS_CUDA_DRIVER_LIB: path.join(fakes, 'libcuda.so.1'), FAKE_NVML_UTIL_5E: '87' }
    : {};
  const url = await startServe('10x', gpu);
  const url11 = await startServe('11x', { TBS_SIM_TRT_VERSION: '11.1.0' });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    for (const size of sizes) {
      await tour(browser, url, models, size);
      await tour11(browser, url11, models, size);
    }
  } finally {
    await browser.close();
  }
}

let failed = false;
process.on('SIGINT', () => void stopServers().then(() => process.exit(130)));
main()
  .catch((e) => {
    failed = true;
    console.error(`ui-tour: ${e.stack || e}`);
  })
  .finally(async () => {
    await stopServers();
    fs.rmSync(scratch, { recursive: true, force: true });
    process.exit(failed ? 1 : 0);
  });
