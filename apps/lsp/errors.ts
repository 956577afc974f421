// How each kind of failure reaches an LSP client: bad arguments are InvalidParams, a model or build
// that cannot work is RequestFailed, a request the client cancelled is RequestCancelled. Messages
// name the command and the field or file; `data` carries a build result when there is one.
import { ErrorCodes, LSPErrorCodes, ResponseError } from 'vscode-languageserver';
import { ServiceError } from '../service/api.js';
import { UsageError } from '../shared/usage-error.js';
import { displayMessage } from '../shared/display-text.js';

// Every message text is for a person: names quoted in it come escaped and long values cut
// (display-text.ts); `data` keeps exact values.
const text = (command: string, message: string) => displayMessage(`${command}: ${message}`);

export function invalidParams(command: string, message: string): ResponseError<void> {
  return new ResponseError(ErrorCodes.InvalidParams, text(command, message));
}

export function requestFailed<D>(command: string, message: string, data?: D): ResponseError<D | undefined> {
  return new ResponseError(LSPErrorCodes.RequestFailed, text(command, message), data);
}

export function requestCancelled<D>(command: string, message: string, data?: D): ResponseError<D | undefined> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, text(command, message), data);
}

/** Anything a handler threw, as a ResponseError; internal errors say so instead of posing as input errors. */
export function toResponseError(command: string, e: unknown): ResponseError<unknown> {
  if (e instanceof ResponseError) return e;
  if (e instanceof UsageError) return invalidParams(command, e.message);
  if (e instanceof ServiceError) {
    return e.code === 'bad_input' || e.code === 'not_found'
      ? invalidParams(command, e.message)
      : e.code === 'internal'
        ? new ResponseError(ErrorCodes.InternalError, text(command, `internal error: ${e.message}`))
        : requestFailed(command, e.message);
  }
  return new ResponseError(ErrorCodes.InternalError, text(command, `internal error: ${e instanceof Error ? e.message : String(e)}`));
}
