// Paths that arrive in JSON name files on the server. They are refused when they could be used
// to walk out of a directory the caller meant (`..` segments) or to truncate a C string (NUL),
// and resolved to absolute paths so every later layer sees one unambiguous name.
import * as path from 'node:path';
import { ErrorResponse } from './errors.js';

export function checkClientPath(value: string, field: string, cwd = process.cwd()): string {
  if (value.length === 0) throw new ErrorResponse('bad_input', `${field}: empty path`);
  if (value.includes('\0')) throw new ErrorResponse('bad_input', `${field}: path contains a NUL byte`);
  if (value.split(/[\\/]+/).includes('..')) {
    throw new ErrorResponse('bad_input', `${field}: ".." segments are not allowed in paths ("${value}")`);
  }
  return path.resolve(cwd, value);
}
