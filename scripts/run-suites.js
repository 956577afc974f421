#!/usr/bin/env node
// npm test: builds, then runs every suite, each to its end even when an earlier one failed, and
// reports each; exits non-zero at the end if any failed. (Chaining the suites with && stopped at
// the first failing one, so a failure in the native tests hid whether the browser tests passed.)
// A failed build stops everything: nothing after it would test the code as it is.
// Usage: node scripts/run-suites.js [suite ...]   (default: all, in the order below)
'use strict';
const { spawnSync } = require('node:child_process');

const SUITES = ['lint', 'test:native', 'test:sanitize', 'test:unit', 'test:memory', 'test:vscode', 'test:e2e'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs one npm script with its output on ours; `exec` is replaceable for the runner's own tests. */
function run(script, exec = (s) => spawnSync(npm, ['run', s], { stdio: 'inherit' })) {
  const started = Date.now();
  console.log(`\n▶ npm run ${script}`);
  const r = exec(script);
  const seconds = (Date.now() - started) / 1000;
  const ok = r.status === 0;
  const how = r.signal ? `signal ${r.signal}` : `exit code ${r.status}`;
  console.log(`${ok ? '✓' : '✗'} npm run ${script} (${seconds.toFixed(0)} s${ok ? '' : `, ${how}`})`);
  return { script, ok, seconds, how };
}

/** The build, then each suite to its end; the exit code for the whole run. */
function runSuites(wanted, exec) {
  const unknown = wanted.filter((s) => !SUITES.includes(s));
  if (unknown.length) {
    console.error(`unknown suite(s): ${unknown.join(', ')}; the suites are: ${SUITES.join(', ')}`);
    return 2;
  }
  const build = run('build', exec);
  if (!build.ok) {
    console.error('\nThe build failed, so no suite was run.');
    return 1;
  }
  const results = (wanted.length ? wanted : SUITES).map((s) => run(s, exec));
  const failed = results.filter((r) => !r.ok);
  console.log('\nSuites:');
  for (const r of results) console.log(`  ${r.ok ? '✓' : '✗'} ${r.script.padEnd(14)} ${r.seconds.toFixed(0).padStart(5)} s${r.ok ? '' : `  (${r.how})`}`);
  console.log(`suites: ${results.length - failed.length} passed, ${failed.length} failed`);
  return failed.length ? 1 : 0;
}

module.exports = { SUITES, runSuites };
if (require.main === module) process.exit(runSuites(process.argv.slice(2)));
