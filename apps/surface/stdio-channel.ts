// Over stdio, stdout IS the JSON-RPC channel: one stray console.log from any module (ours, the
// service, a dependency) would corrupt it and the client would drop the connection. So the real
// stdout is handed to the MCP transport alone, and every other write to process.stdout goes to
// stderr instead. Inbound, every line is checked before the SDK sees it (frameJsonRpc).
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

export interface ProtocolChannel {
  /** What to give StdioServerTransport as its stdout. */
  stdout: Writable;
  /** Puts process.stdout back as it was (tests, and an orderly exit). */
  release(): void;
}

export function claimStdoutForProtocol(): ProtocolChannel {
  const out = process.stdout;
  const originalWrite = out.write;
  const realWrite = originalWrite.bind(out) as Writable['write'];
  // A client that exits first leaves a broken pipe: the write error must not crash the server
  // while it is still shutting builds down.
  out.on('error', () => {});
  out.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => (process.stderr.write as (...a: unknown[]) => boolean)(chunk, encoding, cb)) as typeof out.write;
  // The transport only calls write() and once('drain'); a small facade keeps the real stream out of
  // reach of everything else.
  const facade = {
    write: realWrite,
    once: (event: string, listener: (...args: unknown[]) => void) => {
      out.once(event, listener);
      return facade;
    },
  };
  return {
    stdout: facade as unknown as Writable,
    release: () => {
      out.write = originalWrite;
    },
  };
}

/** Longest line accepted (below the SDK transport's 10 MiB buffer, which closes the connection when exceeded). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export interface JsonRpcErrorReply {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export interface FramingOptions {
  /** Writes one error reply (the caller adds nothing: it gets the whole object). */
  reply(message: JsonRpcErrorReply): void;
  /** One line per rejected input, for the server log. */
  log?(line: string): void;
  maxLineBytes?: number;
}

/**
 * The framing layer under the SDK's stdio transport. The SDK drops a line that is not a valid
 * JSON-RPC message with no answer, so a client waiting on that request's id waits forever (and a
 * line over its buffer size closes the connection). Here every line is checked first: valid
 * messages pass through unchanged, anything else gets the error JSON-RPC 2.0 asks for (-32700
 * for what is not JSON, -32600 for JSON that is no valid message, with the request's id when it
 * has a usable one, else null), and the server reads on.
 */
export function frameJsonRpc(input: Readable, opts: FramingOptions): PassThrough {
  const maxLineBytes = opts.maxLineBytes ?? MAX_LINE_BYTES;
  const out = new PassThrough();
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Inside an over-long line: its bytes are dropped until the next newline. */
  let skipping = false;

  const reject = (id: string | number | null, code: number, message: string) => {
    opts.log?.(`invalid JSON-RPC input (${code}): ${message}`);
    opts.reply({ jsonrpc: '2.0', id, error: { code, message } });
  };

  const onLine = (raw: Buffer) => {
    const text = raw.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return reject(null, PARSE_ERROR, `Parse error: the line is not JSON (${(e as Error).message})`);
    }
    if (JSONRPCMessageSchema.safeParse(value).success) {
      out.write(`${text}\n`);
      return;
    }
    const problem = invalidMessage(value);
    if (problem === undefined) {
      // A malformed response to one of our requests: JSON-RPC never answers a response.
      opts.log?.('invalid JSON-RPC input: a malformed response, dropped');
      return;
    }
    reject(problem.id, INVALID_REQUEST, `Invalid Request: ${problem.why}`);
  };

  input.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (skipping) {
        skipping = false;
        continue;
      }
      if (pendingBytes + piece.length > maxLineBytes) {
        tooLong();
        continue;
      }
      const line = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      pendingBytes = 0;
      onLine(line);
    }
    const rest = chunk.subarray(start);
    if (skipping || rest.length === 0) return;
    if (pendingBytes + rest.length > maxLineBytes) {
      tooLong();
      skipping = true;
      return;
    }
    pending.push(rest);
    pendingBytes += rest.length;
  });
  const tooLong = () => {
    pending = [];
    pendingBytes = 0;
    reject(null, INVALID_REQUEST, `Invalid Request: a message longer than ${maxLineBytes} bytes was dropped`);
  };
  input.on('end', () => out.end());
  input.on('error', (e) => out.destroy(e));
  return out;
}

/** Why a parsed value is no valid message, and the id to answer with; undefined for a response. */
function invalidMessage(value: unknown): { id: string | number | null; why: string } | undefined {
  if (Array.isArray(value)) return { id: null, why: 'batches are not supported: send one message per line' };
  if (typeof value !== 'object' || value === null) return { id: null, why: 'a message must be a JSON object' };
  const msg = value as Record<string, unknown>;
  const id = typeof msg.id === 'string' || typeof msg.id === 'number' ? msg.id : null;
  if (!('method' in msg) && ('result' in msg || 'error' in msg)) return undefined;
  if (msg.jsonrpc !== '2.0') return { id, why: `"jsonrpc" must be "2.0", got ${JSON.stringify(msg.jsonrpc) ?? 'nothing'}` };
  if (!('method' in msg)) return { id, why: '"method" is missing' };
  if (typeof msg.method !== 'string') return { id, why: '"method" must be a string' };
  if ('id' in msg && id === null) return { id, why: '"id" must be a string or an integer' };
  if ('params' in msg && (typeof msg.params !== 'object' || msg.params === null || Array.isArray(msg.params))) {
    return { id, why: '"params" must be an object' };
  }
  return { id, why: 'unexpected members or values in the message' };
}
