#!/usr/bin/env node
// npm test: builds, then runs every suite, each to its end even when an earlier one failed, and
// reports each; exits non-zero at the end if any failed. (Chaining the suites with && stopped at
// the first failing one, so a failure in the native tests hid whether the browser tests passed.)
// A failed build stops everything: nothing after it would test the code as it is.
// Usage: node scripts/run-suites.js [suite ...]   (default: all, in the order below)
'use strict';
const { spawn } = require('node:child_process');

const SUITES = ['test:native', 'test:sanitize', 'test:unit', 'test:memory', 'lint', 'test:vscode', 'test:e2e'];
/**
 * Suites run at the same time as another, to save CI time: the stalled-reader memory tests spend
 * most of their minute waiting (a reader that does not read), and lint keeps one core busy for
 * about as long. The partner runs at normal priority: at nice 19 it starved on a busy machine
 * (Prettier got 3 % of a core beside two CPU-burning loops and lint outlasted the memory suite by
 * minutes), and the memory tests' bound is a property of the design now (every hop bounded in
 * bytes), measured against a baseline run in the same conditions. Its output is held back and
 * printed whole when it ends, so the logs do not interleave.
 */
const ALONGSIDE = { 'test:memory': 'lint' };
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Runs one npm script; its output goes to ours as it comes, or (`held`: a partner run alongside)
 * all at once at its end.
 */
function spawnScript(script, held) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', script], { stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const chunks = [];
    if (held) {
      child.stdout.on('data', (d) => chunks.push(d));
      child.stderr.on('data', (d) => chunks.push(d));
    }
    child.on('error', (e) => resolve({ status: null, signal: null, error: e }));
    child.on('close', (status, signal) => {
      if (held) process.stdout.write(Buffer.concat(chunks));
      resolve({ status, signal });
    });
  });
}

/** Runs one npm script and reports it; `exec` is replaceable for the runner's own tests. */
async function run(script, exec = (s, held) => spawnScript(s, held), held = false) {
  const started = Date.now();
  console.log(`\n▶ npm run ${script}${held ? ' (alongside; its output follows when it ends)' : ''}`);
  const r = await exec(script, held);
  const seconds = (Date.now() - started) / 1000;
  const ok = r.status === 0;
  const how = r.signal ? `signal ${r.signal}` : r.error ? String(r.error.message) : `exit code ${r.status}`;
  console.log(`${ok ? '✓' : '✗'} npm run ${script} (${seconds.toFixed(0)} s${ok ? '' : `, ${how}`})`);
  return { script, ok, seconds, how };
}

/** The build, then each suite to its end (some beside another, see ALONGSIDE); the exit code for the whole run. */
async function runSuites(wanted, exec) {
  const unknown = wanted.filter((s) => !SUITES.includes(s));
  if (unknown.length) {
    console.error(`unknown suite(s): ${unknown.join(', ')}; the suites are: ${SUITES.join(', ')}`);
    return 2;
  }
  const build = await run('build', exec);
  if (!build.ok) {
    console.error('\nThe build failed, so no suite was run.');
    return 1;
  }
  const todo = (wanted.length ? wanted : SUITES).slice();
  const results = [];
  while (todo.length) {
    const script = todo.shift();
    const partner = ALONGSIDE[script];
    if (partner && todo.includes(partner)) {
      todo.splice(todo.indexOf(partner), 1);
      results.push(...(await Promise.all([run(script, exec), run(partner, exec, true)])));
    } else {
      results.push(await run(script, exec));
    }
  }
  const failed = results.filter((r) => !r.ok);
  console.log('\nSuites:');
  for (const r of results) console.log(`  ${r.ok ? '✓' : '✗'} ${r.script.padEnd(14)} ${r.seconds.toFixed(0).padStart(5)} s${r.ok ? '' : `  (${r.how})`}`);
  console.log(`suites: ${results.length - failed.length} passed, ${failed.length} failed`);
  return failed.length ? 1 : 0;
}

module.exports = { SUITES, ALONGSIDE, runSuites, spawnScript };
if (require.main === module) runSuites(process.argv.slice(2)).then((code) => process.exit(code));
