import { Console } from 'node:console';
import { afterEach, expect, it, vi } from 'vitest';
import { claimStdoutForProtocol } from '../stdio-channel.js';

afterEach(() => vi.restoreAllMocks());

it('sends stray stdout writes to stderr and keeps the real stdout for the protocol', () => {
  const realOut = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const errOut = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const channel = claimStdoutForProtocol();
  try {
    // Node's global console is a Console on process.stdout (vitest swaps the global one out).
    new Console({ stdout: process.stdout, stderr: process.stderr }).log('a stray debug line');
    process.stdout.write('another one\n');
    channel.stdout.write('{"jsonrpc":"2.0"}\n');
  } finally {
    channel.release();
  }
  expect(realOut.mock.calls.map((c) => String(c[0]))).toEqual(['{"jsonrpc":"2.0"}\n']);
  expect(errOut.mock.calls.map((c) => String(c[0]))).toEqual(['a stray debug line\n', 'another one\n']);
  // Released: stdout writes go to stdout again.
  process.stdout.write('after\n');
  expect(realOut).toHaveBeenLastCalledWith('after\n');
});
