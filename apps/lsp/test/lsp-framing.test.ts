// The real server process (dist/apps/lsp/main.js) over stdio, fed bad framing and lifecycle
// violations byte by byte: after each bad frame kind the server logs it and still answers the
// valid request that follows; a 200 MiB message is skipped without the process growing by that
// much; requests before `initialize` get -32002, after `shutdown` -32600; `exit` ends the process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { statusKiB } from '../../../test/support/proc-memory.js';
import { isAlive, SERVER_ENTRY, waitFor } from './harness.js';

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const INIT = frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}');
const backends = (id: number) => frame(`{"jsonrpc":"2.0","id":${id},"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.backends"}}`);

interface Server {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  /** Every JSON-RPC message the server wrote so far, parsed. */
  messages: () => any[];
}

let running: Server | undefined;
afterEach(() => {
  if (running?.child.pid && isAlive(running.child.pid)) running.child.kill('SIGKILL');
  running = undefined;
});

function start(args: string[] = []): Server {
  const child = spawn(process.execPath, [SERVER_ENTRY, '--stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdin.on('error', () => {}); // the exit test closes the process under a pending write
  running = {
    child,
    out: () => out,
    err: () => err,
    messages: () =>
      out
        .split(/Content-Length: \d+\r\n\r\n/)
        .filter(Boolean)
        .map((b) => JSON.parse(b)),
  };
  return running;
}

const answer = (s: Server, id: number) => waitFor(`the answer to request ${id}`, () => s.messages().find((m) => m.id === id), 30_000);

/** `data` to stdin, waiting for the pipe to drain when it asks to. */
async function write(s: Server, data: string | Buffer): Promise<void> {
  if (!s.child.stdin.write(data)) await once(s.child.stdin, 'drain');
}

describe('the language server after a bad frame', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['a negative Content-Length', 'Content-Length: -5\r\n\r\n{"jsonrpc":"2.0","id":7,"method":"shutdown"}', /Content-Length "-5" is not a byte count/],
    ['a Content-Length that is not a number', 'Content-Length: abc\r\n\r\n{"jsonrpc":"2.0","id":7,"method":"shutdown"}', /Content-Length "abc" is not a byte count/],
    [
      'a header without Content-Length',
      'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{"jsonrpc":"2.0","id":7,"method":"shutdown"}',
      /the header has no Content-Length/,
    ],
    [
      'a Content-Length of 99999999999 with no such body',
      'Content-Length: 99999999999\r\n\r\n{"jsonrpc":"2.0"',
      /a message of 99999999999 bytes exceeds the limit of 8388608 bytes/,
    ],
    ['a header line that is not "Name: value"', 'hello there\r\n\r\n', /header line "hello there" is not "Name: value"/],
    ['a header that never ends', 'X'.repeat(20_000), /no blank line ends the header within 8192 bytes/],
    // Issue 40: two lengths that disagree (the true one first, a larger one after, which would
    // swallow the next request while waiting for its body).
    [
      'two different Content-Length headers',
      ((body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Length: ${Buffer.byteLength(body) + 4096}\r\n\r\n${body}`)(
        '{"jsonrpc":"2.0","id":7,"method":"shutdown"}',
      ),
      /the header has two different Content-Length values \(\d+ and \d+\)/,
    ],
  ];
  for (const [what, bad, logged] of cases) {
    it(`logs ${what}, resynchronises and answers the next request`, async () => {
      const s = start();
      await write(s, INIT);
      await answer(s, 1);
      await write(s, bad);
      await write(s, backends(2));
      const reply = await answer(s, 2);
      expect(reply.result.backends.map((b: { name: string }) => b.name)).toContain('simulated');
      expect(s.err()).toMatch(logged);
      expect(s.err()).toMatch(/skipped \d+ bytes; reading on from the Content-Length header at byte \d+/);
      // The request inside the bad frame was not run: the server did not shut down.
      expect(s.messages().find((m) => m.id === 7)).toBeUndefined();
      await write(s, backends(3));
      await answer(s, 3);
    });
  }

  it('skips a 200 MiB message without holding it, and answers the next request', async () => {
    const s = start();
    await write(s, INIT);
    await answer(s, 1);
    const pid = s.child.pid!;
    const before = statusKiB(pid, 'VmHWM');
    const size = 200 * 1024 * 1024;
    const head = `{"jsonrpc":"2.0","id":8,"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.backends","arguments":["`;
    await write(s, `Content-Length: ${size}\r\n\r\n${head}`);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = head.length;
    while (sent + chunk.length < size - 3) {
      await write(s, chunk);
      sent += chunk.length;
    }
    await write(s, `${'a'.repeat(size - 3 - sent)}"]}}`);
    await write(s, backends(2));
    await answer(s, 2);
    const grewMiB = (statusKiB(pid, 'VmHWM') - before) / 1024;
    expect(s.err()).toMatch(/a message of 209715200 bytes exceeds the limit of 8388608 bytes/);
    expect(s.messages().find((m) => m.id === 8)).toBeUndefined();
    // A bound on growth, not a figure: the message is 200 MiB; holding it (as a string, too) would be far more.
    expect(grewMiB).toBeLessThan(64);
  }, 120_000);

  it('takes a message up to --max-message-mib and refuses one above it', async () => {
    const s = start(['--max-message-mib', '1']);
    await write(s, INIT);
    await answer(s, 1);
    const pad = (n: number) =>
      `{"jsonrpc":"2.0","id":${n},"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.backends","arguments":[],"pad":"${'p'.repeat(n === 2 ? 1000 : 1024 * 1024)}"}}`;
    await write(s, frame(pad(2)));
    expect((await answer(s, 2)).result.backends).toBeDefined();
    await write(s, frame(pad(3)));
    await write(s, backends(4));
    await answer(s, 4);
    expect(s.messages().find((m) => m.id === 3)).toBeUndefined();
    expect(s.err()).toMatch(/exceeds the limit of 1048576 bytes/);
  });
});

describe('the language server lifecycle', () => {
  it('answers -32002 before initialize, InvalidRequest after shutdown, and exits 0 on exit', async () => {
    const s = start();
    await write(s, backends(1));
    expect((await answer(s, 1)).error).toMatchObject({ code: -32002, message: expect.stringContaining('send "initialize" first') });
    // A notification before initialize is dropped (nothing to answer), and logged.
    await write(s, frame('{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{}}}'));
    await write(s, frame('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":null,"capabilities":{}}}'));
    expect((await answer(s, 2)).result.capabilities).toBeDefined();
    await write(s, backends(3));
    expect((await answer(s, 3)).result.backends).toBeDefined();
    await write(s, frame('{"jsonrpc":"2.0","id":4,"method":"shutdown"}'));
    expect((await answer(s, 4)).result).toBeNull();
    await write(s, backends(5));
    expect((await answer(s, 5)).error).toMatchObject({ code: -32600, message: expect.stringContaining('the server has shut down') });
    expect(s.err()).toMatch(/workspace\/didChangeConfiguration dropped: the server is not initialized yet/);
    const exited = once(s.child, 'exit');
    await write(s, frame('{"jsonrpc":"2.0","method":"exit"}'));
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('exits 1 on exit without a shutdown request first', async () => {
    const s = start();
    await write(s, INIT);
    await answer(s, 1);
    const exited = once(s.child, 'exit');
    await write(s, frame('{"jsonrpc":"2.0","method":"exit"}'));
    const [code] = await exited;
    expect(code).toBe(1);
  });
});
