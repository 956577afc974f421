// An Electron UtilityProcess look-alike backed by a Node child process, for running the real
// worker without the Electron binary. The child gets a `process.parentPort` shaped like
// Electron's ({ postMessage, on('message', ({ data }) => …) }), so the worker takes the code path
// it takes in a real utility process. Like Electron's UtilityProcess, `pid` is undefined until
// 'spawn' and again once 'exit' has been emitted (stdout/stderr become null then too), so code
// that reads the pid at the wrong moment fails here as it would in the app. Two more of
// Electron's habits on Linux are copied because code has to cope with them: 'exit' carries
// process.exit's plain code (Electron's NodeService passes it over Mojo) but the raw wait status
// for a process that died of a signal (SIGABRT is 6), every end but exit(0) is also told through
// the app's 'child-process-gone' (emitted on `emulatedApp`) with the raw wait status (exit(1) is
// 256), and the stdout/stderr listeners are removed in
// the same turn as 'exit', so output still in the pipe is lost. What it cannot show: Electron's
// own process management.
import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import path from 'node:path';
import { tempDir } from '../../../test/support/onnx-gen.js';

let shim: string | null = null;

/** Stands in for Electron's `app` as far as 'child-process-gone' goes. */
export const emulatedApp = new EventEmitter();
const KILLED = new Set(['SIGKILL', 'SIGTERM', 'SIGINT']);

function shimPath(): string {
  if (shim) return shim;
  shim = path.join(tempDir('tbs-parentport-'), 'parent-port-shim.cjs');
  writeFileSync(
    shim,
    `// Electron's process.parentPort, over Node's IPC channel. Electron's postMessage writes to its
// Mojo pipe synchronously; Node's process.send is asynchronous, so process.exit waits for sends
// in flight, or a message posted just before exiting would be lost here but not in Electron.
const { EventEmitter } = require('node:events');
const port = new EventEmitter();
let pending = 0;
let waiters = [];
port.postMessage = (m) => {
  pending++;
  process.send(m, undefined, {}, () => {
    if (--pending === 0) { const w = waiters; waiters = []; w.forEach((f) => f()); }
  });
};
const exit = process.exit.bind(process);
process.exit = (code) => {
  if (pending === 0 || !process.connected) return exit(code);
  waiters.push(() => exit(code));
};
process.on('message', (m) => port.emit('message', { data: m }));
process.parentPort = port;
`,
  );
  return shim;
}

export function emulatedFork(modulePath: string, args: string[], options: { env?: Record<string, string>; serviceName?: string }): never {
  const child = fork(modulePath, args, {
    execArgv: ['--require', shimPath()],
    env: options.env,
    // Electron's postMessage uses structured clone, as does Node's 'advanced' serialization.
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const up = new EventEmitter() as EventEmitter & Record<string, unknown>;
  up.pid = undefined;
  up.stdout = child.stdout;
  up.stderr = child.stderr;
  up.postMessage = (m: unknown) => child.send(m as never);
  // Electron's kill() is SIGTERM (then SIGKILL after 2 s); with no pid it signals nothing.
  up.kill = () => (up.pid === undefined ? false : child.kill('SIGTERM'));
  child.on('spawn', () => {
    up.pid = child.pid;
    up.emit('spawn');
  });
  child.on('message', (m) => up.emit('message', m));
  child.on('exit', (code, signal) => {
    // Node's 'exit' can come before the pipes are drained: Electron drops what is left.
    child.stdout?.removeAllListeners('data');
    child.stderr?.removeAllListeners('data');
    child.stdout?.resume();
    child.stderr?.resume();
    const status = signal ? constants.signals[signal] : (code ?? 0) << 8;
    up.emit('exit', signal ? status : (code ?? 0));
    if (status !== 0) {
      const reason = signal ? (KILLED.has(signal) ? 'killed' : 'crashed') : 'abnormal-exit';
      setTimeout(() => emulatedApp.emit('child-process-gone', {}, { type: 'Utility', reason, exitCode: status, name: options.serviceName }), 2);
    }
    up.pid = undefined;
    up.stdout = null;
    up.stderr = null;
  });
  child.on('error', () => undefined);
  return up as never;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
