// Model problems as LSP diagnostics on the model file, so an editor marks the .onnx file in its
// explorer and Problems list instead of hiding the reason in a failed command's error text.
// ONNX is binary: there is no line to point at, so every diagnostic sits on 0:0.
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver';
import { displayMessage } from '../shared/display-text.js';

export const DIAGNOSTIC_SOURCE = 'trt-build-studio';

export type ProblemKind = 'bad-model' | 'shapes' | 'parse-error' | 'build-failed';

export function modelUri(modelPath: string): string {
  return pathToFileURL(modelPath).href;
}

function diagnostic(kind: ProblemKind, message: string): Diagnostic {
  return {
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    severity: DiagnosticSeverity.Error,
    source: DIAGNOSTIC_SOURCE,
    code: kind,
    // Names in a message come from the model file: an editor shows them as text, so control
    // characters and bidi overrides arrive escaped and long values cut, as on every surface.
    message: displayMessage(message),
  };
}

/** One diagnostic per problem line (the shape check lists each input on its own line). */
export function problemDiagnostics(kind: ProblemKind, message: string): Diagnostic[] {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return (lines.length ? lines : [message]).map((l) => diagnostic(kind, l));
}

// The TensorRT backend reports parser failures as "cannot parse <model>" followed by one line per
// parser error: `ONNX parse error at node 3 "conv_3" (Conv): UNSUPPORTED_NODE (8): <desc>`.
const PARSE_ERROR_LINE = /^ONNX parse error\b/;

/**
 * Diagnostics for a build that failed in the model parser: one per parser error, each naming its
 * node. Undefined for failures that are not about the model (out of memory, a tactic error...).
 */
export function parserDiagnostics(error: string | undefined): Diagnostic[] | undefined {
  if (!error || !error.startsWith('cannot parse ')) return undefined;
  const lines = error
    .split('\n')
    .slice(1)
    .map((l) => l.trim());
  const errors = lines.filter((l) => PARSE_ERROR_LINE.test(l));
  const rest = lines.filter((l) => l.length > 0 && !PARSE_ERROR_LINE.test(l));
  const out = errors.map((l) => diagnostic('parse-error', l));
  // "(n more parser errors not shown)" and similar trailers stay visible as their own entry.
  for (const l of rest) out.push(diagnostic('parse-error', l));
  return out.length ? out : [diagnostic('parse-error', error.split('\n')[0])];
}
