#!/usr/bin/env node
// npm run test:sanitize — builds the core, the multi-threaded stress test and the back-pressure
// test (builder threads waiting at the outbox's bound, released by a cancel: test_outbox_bound.cc)
// with ThreadSanitizer (plain cmake, build/native-tsan; no Node-API involved) and runs them.
// `-- --address` (or TBS_SANITIZE=address) uses AddressSanitizer in build/native-asan instead.
// `-- --load N` (or TBS_SANITIZE_LOAD=N) runs the tests while N busy-loop processes compete for
// the CPUs, the way a loaded CI machine starves the pipeline's flusher; they are killed by pid
// when the run ends, however it ends. The stress test fails if its memory passes a bound
// (TBS_STRESS_MAX_MIB, default 512 MiB; ThreadSanitizer runs peak near 120 MiB) whatever the scheduling.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const kind = process.argv.includes('--address') ? 'address' : process.env.TBS_SANITIZE || 'thread';
if (!['thread', 'address'].includes(kind)) {
  console.error(`test:sanitize: unknown sanitizer "${kind}" (thread|address)`);
  process.exit(2);
}
const buildDir = path.join(root, 'build', kind === 'thread' ? 'native-tsan' : 'native-asan');
const loadArg = process.argv.indexOf('--load');
const load = Number(loadArg >= 0 ? process.argv[loadArg + 1] : process.env.TBS_SANITIZE_LOAD || 0);
if (!Number.isInteger(load) || load < 0 || load > 64) {
  console.error(`test:sanitize: --load wants a number of busy processes from 0 to 64, got "${process.argv[loadArg + 1] ?? process.env.TBS_SANITIZE_LOAD}"`);
  process.exit(2);
}

function run(cmd, args, env) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) {
    console.error(`test:sanitize: cannot run ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  return r.status ?? 1;
}

const generator = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
if (run('cmake', ['-S', root, '-B', buildDir, ...generator, `-DTBS_SANITIZE=${kind}`, '-DCMAKE_BUILD_TYPE=RelWithDebInfo']) !== 0 ||
    run('cmake', ['--build', buildDir]) !== 0) {
  console.error('test:sanitize: build failed');
  process.exit(1);
}
const env = {
  // Any report fails the run; second_deadlock_stack makes lock-order reports actionable.
  TSAN_OPTIONS: 'halt_on_error=1 second_deadlock_stack=1 exitcode=66',
  ASAN_OPTIONS: 'halt_on_error=1 detect_leaks=1',
};
const hogs = [];
const stopHogs = () => {
  for (const h of hogs.splice(0)) {
    try {
      process.kill(h.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
};
process.on('exit', stopHogs);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopHogs();
    process.exit(130);
  });
}
for (let i = 0; i < load; i++) hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
if (load > 0) console.log(`test:sanitize: running under load (${load} busy processes: ${hogs.map((h) => h.pid).join(' ')})`);
const status = run('ctest', ['--test-dir', buildDir, '--output-on-failure', '--timeout', '600'], env);
stopHogs();
if (status !== 0) console.error(`test:sanitize: ${kind} sanitizer run failed`);
process.exit(status === 0 ? 0 : 1);
