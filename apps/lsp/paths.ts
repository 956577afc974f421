// Editors speak in URIs ("file:///home/me/m.onnx"), agents and terminals in paths ("~/m.onnx").
// Both are accepted wherever a command takes a file.
import { fileURLToPath } from 'node:url';
import { resolveUserPath } from '../surface/user-path.js';
import { UsageError } from '../shared/usage-error.js';

export function fileArg(value: string, field: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    if (!value.toLowerCase().startsWith('file://')) throw new UsageError(`${field} must be a file path or a file:// URI, got "${value}"`);
    try {
      return fileURLToPath(value);
    } catch (e) {
      throw new UsageError(`${field} is not a usable file URI ("${value}"): ${(e as Error).message}`);
    }
  }
  return resolveUserPath(value);
}
