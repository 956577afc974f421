// How the extension starts `trt-build-studio lsp`: the installed command by default, or a
// checkout's bin/trt-build-studio.js run with node.
import type { ServerOptions } from 'vscode-languageclient/node';

export interface ServerSettings {
  path: string;
  extraArgs: readonly string[];
}

export function serverOptions(s: ServerSettings): ServerOptions {
  const args = ['lsp', ...s.extraArgs];
  const run = /\.[cm]?js$/i.test(s.path) ? { command: 'node', args: [s.path, ...args] } : { command: s.path, args };
  // stdio is the server's only transport; no `transport` field, so nothing is appended to args.
  return { run, debug: run };
}
