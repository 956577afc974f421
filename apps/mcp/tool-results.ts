// Tool results: structured content for programs, plus the same facts as text for models and for
// clients that predate structured output (the MCP spec asks for both).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceError } from '../service/api.js';
import { ToolInputError } from '../surface/schemas.js';

export function okResult(structured: Record<string, unknown>, headline?: string): CallToolResult {
  const json = JSON.stringify(structured, null, 2);
  return { content: [{ type: 'text', text: headline ? `${headline}\n${json}` : json }], structuredContent: structured };
}

/** A tool error the agent can act on; `structured` travels along when there is a build to describe. */
export function errorResult(message: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: structured ? `${message}\n${JSON.stringify(structured, null, 2)}` : message }],
    ...(structured ? { structuredContent: structured } : {}),
  };
}

/** Maps what a tool threw to a tool error: user-fixable errors verbatim, anything else marked internal. */
export function resultForError(err: unknown, action: string): CallToolResult {
  if (err instanceof ToolInputError) return errorResult(err.message);
  if (err instanceof ServiceError) return errorResult(`${action}: ${err.message}`);
  const message = err instanceof Error ? err.message : String(err);
  return errorResult(`${action}: internal error: ${message}`);
}
