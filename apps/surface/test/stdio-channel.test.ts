import { Console } from 'node:console';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { claimStdoutForProtocol, frameJsonRpc, type JsonRpcErrorReply } from '../stdio-channel.js';

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

it('frames lines across chunk boundaries, passes valid messages unchanged and answers the rest', async () => {
  const input = new PassThrough();
  const replies: JsonRpcErrorReply[] = [];
  const framed = frameJsonRpc(input, { reply: (m) => replies.push(m), maxLineBytes: 64 });
  const passed: string[] = [];
  framed.on('data', (c: Buffer) => passed.push(c.toString()));
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  // A message split mid-token, two in one chunk, CRLF endings, and a line past the limit that
  // arrives in three chunks (dropped as it streams, answered once).
  input.write(ping.slice(0, 10));
  input.write(`${ping.slice(10)}\r\n{"jsonrpc":"2.0","id":2}\n`);
  input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  input.write(`{"pad":"${'x'.repeat(50)}`);
  input.write('x'.repeat(50));
  input.write(`"}\nnot json\n${ping}\n`);
  input.end();
  await new Promise((r) => framed.on('end', r));
  expect(passed.join('')).toBe(`${ping}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${ping}\n`);
  expect(replies).toEqual([
    { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'Invalid Request: "method" is missing' } },
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a message longer than 64 bytes was dropped' } },
    { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
  ]);
});
