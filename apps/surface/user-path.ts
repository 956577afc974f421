// Paths as agents and editors send them: "~/models/x.onnx" and relative paths. The service wants
// absolute ones; MCP arguments and LSP command arguments both come through here.
import * as path from 'node:path';
import { homeDir } from '../service/user-dirs.js';

/** Agents send "~/models/x.onnx" and relative paths; the service wants absolute ones. */
export function resolveUserPath(p: string): string {
  const expanded = p === '~' || p.startsWith('~/') ? path.join(homeDir(), p.slice(1)) : p;
  return path.resolve(expanded);
}
