// JSON errors of the HTTP API. Every failure a client can cause ends here with a status and a
// code from docs/http-api.md, so scripts can branch on `error.code` instead of parsing messages.
import type * as http from 'node:http';
import { ServiceError, type ServiceErrorCode } from '../api.js';
import { displayMessage } from '../../shared/display-text.js';

export type HttpErrorCode = ServiceErrorCode | 'unauthorized' | 'forbidden' | 'too_large' | 'method_not_allowed' | 'timeout' | 'unavailable';

const STATUS: Record<HttpErrorCode, number> = {
  bad_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  timeout: 408,
  conflict: 409,
  too_large: 413,
  bad_model: 422,
  internal: 500,
  unavailable: 503,
};

/**
 * The server's side of a failed request: "answer with this status and code". A route throws it
 * (or a ServiceError, mapped by toErrorResponse) and the server sends it as the JSON error body.
 * The page's side, "the server answered this status", is ServiceAnswerError (apps/renderer/web).
 */
export class ErrorResponse extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ErrorResponse';
    this.status = STATUS[code];
  }
}

/** Maps anything thrown by a route to an ErrorResponse; unknown errors become a 500 without internals. */
export function toErrorResponse(err: unknown): ErrorResponse {
  if (err instanceof ErrorResponse) return err;
  if (err instanceof ServiceError) return new ErrorResponse(err.code, err.message);
  // ServiceError may come from another copy of api.js (dist vs sources in tests): match by shape.
  if (err instanceof Error && err.name === 'ServiceError' && typeof (err as ServiceError).code === 'string' && (err as ServiceError).code in STATUS) {
    return new ErrorResponse((err as ServiceError).code, err.message);
  }
  return new ErrorResponse('internal', 'internal error (see the server log)');
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: http.ServerResponse, err: ErrorResponse): void {
  if (res.headersSent) {
    // Too late for a status: the client sees a cut-off body, which is the honest signal left.
    res.destroy();
    return;
  }
  // The message is for a person (and often lands in a terminal or a log): a name quoted in it
  // comes escaped and a long one cut (display-text.ts); JSON data fields elsewhere keep exact values.
  sendJson(res, err.status, { error: { code: err.code, message: displayMessage(err.message) } }, err.headers);
}
