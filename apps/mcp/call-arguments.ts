// tools/call arguments that do not fit the tool are a protocol error: JSON-RPC -32602 (Invalid
// params) with one line naming the problem, as the MCP spec lists "invalid arguments" among the
// protocol errors. Left to the SDK, they are not: `arguments: null` fails its request schema and
// comes back as -32603 with the raw schema-issue array, and arguments that fail the tool's input
// schema come back as a tool result (isError). Here every tools/call is checked first; only
// well-formed arguments reach the SDK's own handler, which then runs the tool as before.
//
// The SDK keeps its request handlers and registered tools in private fields; both are reached
// here and only here, and installInvalidParamsCheck throws at start-up (so every MCP test fails)
// if an SDK update renames them.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { describeZodError } from '../shared/protocol.js';

type RequestHandler = (request: { method: string; params?: unknown }, extra: unknown) => Promise<unknown>;

interface SdkInternals {
  server: { _requestHandlers?: Map<string, RequestHandler> };
  _registeredTools?: Record<string, { inputSchema?: z.ZodType }>;
}

/** Checks beyond the input schema, per tool (e.g. build options, which the schema leaves open). Throws an Error whose message names the problem. */
export type ArgumentCheck = (args: Record<string, unknown>) => void;

/** One line: a message that travels in a JSON-RPC error is read in logs and agent transcripts. */
const oneLine = (s: string) => s.replace(/\s*[\r\n]+\s*/g, '; ');

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

/**
 * The Invalid-params message for a tools/call request's params, or undefined when they are fine
 * (an unknown tool is left to the SDK, which answers -32602 "Tool … not found" itself).
 */
export function invalidCallArguments(params: unknown, tools: Record<string, { inputSchema?: z.ZodType }>, checks: Record<string, ArgumentCheck> = {}): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return `Invalid params: tools/call needs an object with "name" and "arguments", got ${kindOf(params)}`;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string') return `Invalid params: "name" must be the name of a tool (a string), got ${kindOf(name)}`;
  const tool = tools[name];
  if (!tool) return undefined;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    return `Invalid arguments for tool ${name}: "arguments" must be an object, got ${kindOf(args)}`;
  }
  const given = (args ?? {}) as Record<string, unknown>;
  if (tool.inputSchema) {
    const r = tool.inputSchema.safeParse(given);
    if (!r.success) return oneLine(`Invalid arguments for tool ${name}: ${describeZodError(r.error)}`);
  }
  try {
    checks[name]?.(given);
  } catch (e) {
    return oneLine(`Invalid arguments for tool ${name}: ${(e as Error).message}`);
  }
  return undefined;
}

/** Puts the check in front of the SDK's tools/call handler. Call after every tool is registered. */
export function installInvalidParamsCheck(server: McpServer, checks: Record<string, ArgumentCheck> = {}): void {
  const internals = server as unknown as SdkInternals;
  const handlers = internals.server._requestHandlers;
  const tools = internals._registeredTools;
  const sdkHandler = handlers?.get('tools/call');
  if (!handlers || !tools || !sdkHandler) {
    throw new Error('the MCP SDK no longer keeps its tools/call handler where installInvalidParamsCheck looks for it (apps/mcp/call-arguments.ts)');
  }
  handlers.set('tools/call', async (request, extra) => {
    const problem = invalidCallArguments(request.params, tools, checks);
    // Not an McpError: its message gains an "MCP error -32602: " prefix, which the client's
    // McpError then prefixes again. The SDK answers any thrown error with its code and message.
    if (problem) throw Object.assign(new Error(problem), { code: ErrorCode.InvalidParams });
    return sdkHandler(request, extra);
  });
}
