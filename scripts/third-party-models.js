#!/usr/bin/env node
// `node scripts/third-party-models.js <folder> [--http]`: runs the product on ONNX models nobody on
// the team wrote (they cannot live in the repository: licences, sizes). For every .onnx file under
// the folder: `inspect --json`, then a simulated `build` (dynamic inputs get 1/1/2 for every
// unfixed dimension, shape-tensor inputs values of 1); with --http, the same through a real
// `serve`: the model uploaded as the web UI does (or named by path when it has external data, which
// an upload cannot carry), its summary compared with the CLI's, and a simulated build run there.
// Prints one JSON document: per model what worked, how long it took, and any error verbatim.
// Exit code 1 when any step failed, 2 on bad usage. Needs dist/ (`npm run build:ts`).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { isDeepStrictEqual } = require('node:util');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'bin/trt-build-studio.js');
const args = process.argv.slice(2);
const http = args.includes('--http');
const dir = args.find((a) => !a.startsWith('--'));
if (!dir || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
  console.error('usage: node scripts/third-party-models.js <folder of .onnx models> [--http]');
  process.exit(2);
}
if (!fs.existsSync(path.join(root, 'dist'))) {
  console.error('third-party-models: dist/ is missing; run `npm run build:ts` first');
  process.exit(2);
}

/** "x float32 [1,2]", or "(no shape)" where the file declares none (not a scalar's "[]"). */
function tensorText(t) {
  return `${t.name} ${t.elemType} ${t.rankUnknown ? '(no shape)' : `[${t.shape.join(',')}]`}`;
}

function findModels(d) {
  return fs
    .readdirSync(d, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? findModels(path.join(d, e.name)) : e.name.endsWith('.onnx') ? [path.join(d, e.name)] : []));
}

/** The CLI child running now (one at a time), stopped with this script. */
let current;

function run(argv) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, [cli, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    current = p;
    let out = '';
    let err = '';
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (err += b));
    p.on('close', (code) => resolve({ code, out, err: err.trim(), ms: Math.round(performance.now() - t0) }));
  });
}

/** min/opt/max per dynamic input: 1/1/2 for each unfixed dimension (same name, same value); shape tensors get values. */
function shapesFor(summary) {
  const tensors = new Set(summary.shapeTensorInputs ?? []);
  const out = {};
  for (const input of summary.inputs) {
    if (tensors.has(input.name)) {
      const n = input.shape.length === 0 ? 1 : input.shape[0];
      if (typeof n !== 'number') return { unsupported: `shape-tensor input "${input.name}" has a dynamic length` };
      const ones = new Array(n).fill(1);
      out[input.name] = { min: ones, opt: ones, max: ones };
    } else if (input.shape.some((d) => typeof d !== 'number')) {
      const at = (v) => input.shape.map((d) => (typeof d === 'number' ? d : v));
      out[input.name] = { min: at(1), opt: at(1), max: at(2) };
    }
  }
  return { shapes: out };
}

const trtexec = (shapes) => Object.entries(shapes).map(([n, s]) => `${n}:${[s.min, s.opt, s.max].map((d) => d.join('x')).join('/')}`);

async function cliRun(file, work) {
  const inspect = await run(['inspect', '--json', file]);
  const r = { inspect: { ok: inspect.code === 0, ms: inspect.ms } };
  if (inspect.code !== 0) {
    r.inspect.error = inspect.err;
    return { r };
  }
  const s = JSON.parse(inspect.out);
  Object.assign(r.inspect, {
    producer: `${s.producer.name} ${s.producer.version}`.trim(),
    opsets: s.opsetImports.map((o) => `${o.domain} ${o.version}`).join(', '),
    nodes: s.nodeCount,
    weightBytes: s.initializerBytes,
    externalBytes: s.externalData.bytes,
    inputs: s.inputs.map(tensorText),
    outputs: s.outputs.map(tensorText),
    ...(s.shapeTensorInputs?.length ? { shapeTensorInputs: s.shapeTensorInputs } : {}),
  });
  const { shapes, unsupported } = shapesFor(s);
  if (unsupported) {
    r.build = { ok: false, skipped: unsupported };
    return { r, summary: s };
  }
  const argv = ['build', file, '-o', path.join(work, 'cli.engine'), '--backend', 'simulated', '--sim-duration', '0.2', '--json'];
  for (const sh of trtexec(shapes)) argv.push('--shapes', sh);
  const build = await run(argv);
  const last = build.out.trim().split('\n').pop();
  let fin;
  try {
    fin = JSON.parse(last);
  } catch {
    fin = undefined;
  }
  r.build = { ok: build.code === 0 && fin?.status === 'succeeded', ms: build.ms, status: fin?.status ?? null, engineBytes: fin?.engineBytes };
  if (!r.build.ok) r.build.error = fin?.error ?? build.err;
  return { r, summary: s, shapes };
}

// ─── HTTP: a real `serve`, driven the way the web UI drives it ───

async function startServe(work) {
  const token = 'third-party-models';
  const p = spawn(process.execPath, [cli, 'serve', '--port', '0', '--token', token, '--output-dir', work], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errText = '';
  p.stderr.on('data', (b) => (errText += b));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (b) => {
      out += b;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    p.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${errText}`)));
  });
  return { p, url, token };
}

async function httpRun(serve, file, cliSummary, shapes) {
  const auth = { authorization: `Bearer ${serve.token}` };
  const t0 = performance.now();
  let res;
  if (cliSummary?.externalData.files.length) {
    res = await fetch(`${serve.url}/api/models`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: file }) });
  } else {
    const form = new FormData();
    form.append('model', new Blob([fs.readFileSync(file)]), path.basename(file));
    res = await fetch(`${serve.url}/api/models`, { method: 'POST', headers: auth, body: form });
  }
  const body = await res.json();
  const r = { upload: { ok: res.status === 201, status: res.status, ms: Math.round(performance.now() - t0) } };
  if (res.status !== 201) {
    r.upload.error = body.error?.message;
    return r;
  }
  if (cliSummary) {
    const strip = ({ path: _p, fileName: _f, ...rest }) => rest;
    r.upload.sameSummaryAsCli = isDeepStrictEqual(strip(body.summary), strip(cliSummary));
  }
  if (!shapes) return r;
  const t1 = performance.now();
  const start = await fetch(`${serve.url}/api/builds`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ modelPath: body.path, options: { backend: 'simulated', simDuration: 0.2, shapes } }),
  });
  const started = await start.json();
  if (start.status !== 201) {
    r.build = { ok: false, status: start.status, error: started.error?.message };
    return r;
  }
  for (;;) {
    const rec = await (await fetch(`${serve.url}/api/builds/${started.id}`, { headers: auth })).json();
    if (['succeeded', 'cancelled', 'failed', 'crashed'].includes(rec.state)) {
      const status = rec.outcome?.status ?? rec.state;
      r.build = { ok: status === 'succeeded', status, ms: Math.round(performance.now() - t1) };
      if (status !== 'succeeded') r.build.error = rec.outcome?.error;
      return r;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-3p-'));
  const serve = http ? await startServe(work) : undefined;
  // Stopped from outside (Ctrl-C, a test's timeout): `serve` must not outlive this script.
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      serve?.p.kill('SIGKILL');
      current?.kill('SIGKILL');
      fs.rmSync(work, { recursive: true, force: true });
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
  const models = [];
  try {
    for (const file of findModels(path.resolve(dir))) {
      const { r, summary, shapes } = await cliRun(file, work);
      const entry = { model: path.relative(path.resolve(dir), file), bytes: fs.statSync(file).size, ...r };
      if (serve) entry.http = await httpRun(serve, file, summary, shapes);
      models.push(entry);
    }
  } finally {
    if (serve) {
      serve.p.kill('SIGTERM');
      await new Promise((resolve) => serve.p.once('exit', resolve));
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
  const failed = models.filter((m) => !m.inspect.ok || !m.build?.ok || (m.http && (!m.http.upload.ok || m.http.upload.sameSummaryAsCli === false || (m.http.build && !m.http.build.ok))));
  const result = { folder: path.resolve(dir), models: models.length, failed: failed.map((m) => m.model), results: models };
  console.log(JSON.stringify(result, null, 2));
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((e) => {
  console.error(`third-party-models: ${e.stack ?? e}`);
  process.exitCode = 1;
});
