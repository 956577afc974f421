// Tool results: structured content for programs, plus the same facts as text for models and for
// clients that predate structured output (the MCP spec asks for both).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../service/api.js';
import { UsageError } from '../shared/usage-error.js';
import { displayMessage } from '../shared/display-text.js';

/**
 * JSON as text with the characters a terminal or an editor would act on (DEL, C1 controls, bidi
 * controls, line separators; JSON.stringify escapes only C0) written as \uXXXX: the same JSON
 * value, exact names kept, nothing that reorders or recolours what a person reads.
 */
function safeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function okResult(structured: Record<string, unknown>, headline?: string): CallToolResult {
  const json = safeJson(structured);
  return { content: [{ type: 'text', text: headline ? `${displayMessage(headline)}\n${json}` : json }], structuredContent: structured };
}

/** okResult with a headline of several lines (explain_engine): each line made safe, the line breaks kept. */
export function okResultLines(structured: Record<string, unknown>, lines: readonly string[]): CallToolResult {
  return { content: [{ type: 'text', text: `${lines.map(displayMessage).join('\n')}\n${safeJson(structured)}` }], structuredContent: structured };
}

/** A tool error the agent can act on; `structured` travels along when there is a build to describe. */
export function errorResult(message: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: structured ? `${displayMessage(message)}\n${safeJson(structured)}` : displayMessage(message) }],
    ...(structured ? { structuredContent: structured } : {}),
  };
}

/** Maps what a tool threw to a tool error: user-fixable errors verbatim, anything else marked internal. */
export function resultForError(err: unknown, action: string): CallToolResult {
  if (err instanceof UsageError) return errorResult(err.message);
  if (err instanceof ServiceError) return errorResult(`${action}: ${err.message}`);
  const message = err instanceof Error ? err.message : String(err);
  return errorResult(`${action}: internal error: ${message}`);
}
