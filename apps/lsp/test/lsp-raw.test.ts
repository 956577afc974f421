// Bytes a buggy client might send, written straight to the server's stdin: malformed JSON, null
// params, arguments of the wrong type. Each gets its answer and the server keeps answering.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../names.js';
import { isAlive, SERVER_ENTRY, waitFor } from './harness.js';

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
let pid: number | undefined;

afterEach(() => {
  if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL');
  pid = undefined;
});

describe('the server under malformed input', () => {
  it('answers every request and survives garbage between them', async () => {
    const child = spawn(process.execPath, [SERVER_ENTRY], { stdio: ['pipe', 'pipe', 'pipe'] });
    pid = child.pid;
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stdin.write(
      [
        frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}'),
        frame('{this is not json'),
        frame('{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":null}'),
        frame('{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.build","arguments":"abc"}}'),
        frame('{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.inspect","arguments":[{"path":"file://host/share/x.onnx"}]}}'),
        frame('{"jsonrpc":"2.0","id":5,"method":"workspace/executeCommand","params":{"command":"trtBuildStudio.backends"}}'),
      ].join(''),
    );
    const answers = await waitFor('five answers', () => {
      const bodies = out
        .split(/Content-Length: \d+\r\n\r\n/)
        .filter(Boolean)
        .map((b) => JSON.parse(b));
      return bodies.filter((b) => b.id !== undefined).length >= 5 ? bodies : undefined;
    });
    const byId = new Map(answers.filter((a) => a.id !== undefined).map((a) => [a.id, a]));
    // build, cancel, inspect, backends, checkEngine: every command the server has, and only those.
    expect([...byId.get(1).result.capabilities.executeCommandProvider.commands].sort()).toEqual(Object.values(COMMANDS).sort());
    expect(byId.get(2).error).toMatchObject({ code: -32602, message: expect.stringContaining('unknown command "(none)"') });
    expect(byId.get(3).error.message).toBe('trtBuildStudio.build: invalid arguments: (root): Invalid input: expected object, received string');
    expect(byId.get(4).error.message).toMatch(/^trtBuildStudio\.inspect: path is not a usable file URI/);
    expect(byId.get(5).result.backends.map((b: { name: string }) => b.name)).toContain('simulated');
    expect(isAlive(pid!)).toBe(true);
    child.stdin.end();
    await waitFor('the server to exit', () => !isAlive(pid!) || undefined);
  });
});
