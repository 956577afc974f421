// Reads a JSON request body with a hard size limit. The limit is checked against Content-Length
// up front and again while streaming (chunked bodies have no length), so a huge body is refused
// without ever being held in memory.
import type * as http from 'node:http';
import { ErrorResponse } from './errors.js';

export const JSON_LIMIT_BYTES = 1024 * 1024;

/** Bytes we are willing to read and throw away after a 413 so the client can read our answer. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

export function isJsonRequest(req: http.IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  return /^application\/([\w.+-]+\+)?json\b/.test(type);
}

export function isMultipartRequest(req: http.IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

export async function readJsonBody(req: http.IncomingMessage, limit = JSON_LIMIT_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    discardRest(req);
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) {
        discardRest(req);
        throw tooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof ErrorResponse) throw e;
    // The client went away mid-body: its fault, not an internal error worth logging.
    throw new ErrorResponse('bad_input', `request body aborted: ${(e as Error).message}`);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ErrorResponse('bad_input', 'empty request body: expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ErrorResponse('bad_input', `invalid JSON: ${(e as Error).message}`);
  }
}

function tooLarge(limit: number): ErrorResponse {
  return new ErrorResponse('too_large', `request body exceeds ${limit} bytes`, { Connection: 'close' });
}

/**
 * Keeps reading (and dropping) what the client is still sending, up to a bound, so it gets to
 * read the 413 instead of a reset; past the bound the socket is cut.
 */
export function discardRest(req: http.IncomingMessage): void {
  let dropped = 0;
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT_BYTES) {
      req.off('data', onData);
      req.socket.destroy();
    }
  };
  req.on('data', onData);
  req.resume();
}
