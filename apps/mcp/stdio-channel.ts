// Over stdio, stdout IS the JSON-RPC channel: one stray console.log from any module (ours, the
// service, a dependency) would corrupt it and the client would drop the connection. So the real
// stdout is handed to the MCP transport alone, and every other write to process.stdout goes to
// stderr instead.
import type { Writable } from 'node:stream';

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
  out.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) =>
    (process.stderr.write as (...a: unknown[]) => boolean)(chunk, encoding, cb)) as typeof out.write;
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
