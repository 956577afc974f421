// Edge cases of the tool layer that a real build service cannot be made to produce on demand
// (events delivered inside subscribe(), an abort that lands while startBuild is in flight, a
// service bug). The service here is a scripted stand-in; the SDK client and server are real,
// linked in memory. The end-to-end behaviour is covered by mcp-stdio.test.ts.
import * as os from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildServiceApi, StartBuildInput, Subscription } from '../../service/api.js';
import { ServiceError } from '../../service/api.js';
import type { BuildEvent, BuildFinished, BuildRecord, CancelReason } from '../../shared/protocol.js';
import type { BuildResultOut } from '../../surface/schemas.js';
import { createMcpServer } from '../tools.js';
import { StreamWriter } from '../../../test/support/synthetic-build.js';

class ScriptedService implements BuildServiceApi {
  cancels: Array<{ id: string; reason?: CancelReason }> = [];
  started: StartBuildInput[] = [];
  startDelay?: Promise<void>;
  startError?: Error;
  /** Delivered synchronously from inside subscribe(), before it returns its snapshot. */
  eventsDuringSubscribe: BuildEvent[] = [];
  private finish?: (f: BuildFinished) => void;
  readonly record: BuildRecord = {
    id: 'b-1',
    state: 'running',
    modelPath: '/m.onnx',
    options: { backend: 'simulated' },
    queuedAt: new Date().toISOString(),
    startedAt: new Date().toISOString(),
    lastSeq: -1,
    engineAvailable: false,
  };

  async listBackends() {
    throw new TypeError('x is not a function');
  }
  async inspectModel(): Promise<never> {
    throw new ServiceError('not_found', 'no such file: /nope.onnx');
  }
  async startBuild(input: StartBuildInput): Promise<BuildRecord> {
    this.started.push(input);
    await this.startDelay;
    if (this.startError) throw this.startError;
    return this.record;
  }
  getBuild(id: string) {
    return id === this.record.id ? this.record : undefined;
  }
  listBuilds() {
    return [this.record];
  }
  cancelBuild(id: string, reason?: CancelReason) {
    this.cancels.push({ id, reason });
    this.finish?.({ v: 1, buildId: id, seq: 99, t: 5, type: 'build.finished', status: 'cancelled', durationMs: 5, cancelLatencyMs: 1 });
    return true;
  }
  subscribe(_id: string, onEvents: (events: BuildEvent[]) => void): Subscription {
    if (this.eventsDuringSubscribe.length) onEvents(this.eventsDuringSubscribe);
    return { snapshot: this.record, unsubscribe: () => {} };
  }
  waitForResult(): Promise<BuildFinished> {
    return new Promise((resolve) => (this.finish = resolve));
  }
  end(f: Omit<BuildFinished, 'v' | 'buildId' | 'seq' | 't' | 'type'>) {
    this.finish?.({ v: 1, buildId: this.record.id, seq: 100, t: 10, type: 'build.finished', ...f });
  }
  enginePath() {
    return undefined;
  }
  async shutdown() {}
}

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect(service: BuildServiceApi): Promise<Client> {
  const server = createMcpServer(service, { version: 'test' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'test', version: '1' });
  await client.connect(b);
  return client;
}

const text = (r: { content?: unknown }) => (r.content as Array<{ text?: string }>).map((c) => c.text).join('\n');

describe('tool layer edge cases', () => {
  it('applies events that arrive inside subscribe() once, after the snapshot', async () => {
    const svc = new ScriptedService();
    const w = new StreamWriter('b-1');
    w.emit({ type: 'build.started', backend: 'simulated', backendVersion: 'sim-1', simulated: true });
    const root = w.start('Building engine', null, 4);
    w.start('Cloning network graph', root, 10);
    svc.eventsDuringSubscribe = w.events;
    const c = await connect(svc);
    const updates: Progress[] = [];
    const call = c.callTool({ name: 'build_engine', arguments: { modelPath: '/m.onnx', options: { backend: 'simulated' } } }, undefined, {
      onprogress: (p) => updates.push(p),
    });
    await new Promise((r) => setTimeout(r, 50));
    svc.end({ status: 'succeeded', durationMs: 10, engineBytes: 3, outputPath: '/o.engine' });
    const r = await call;
    expect((r.structuredContent as BuildResultOut).status).toBe('succeeded');
    expect(updates[0].message).toMatch(/^Building engine 0\/4 › Cloning network graph 0\/10 · /);
    expect(updates.at(-1)!.total).toBe(updates.at(-1)!.progress);
    expect(updates.slice(0, -1).every((u) => u.total === undefined)).toBe(true);
  });

  it('cancels a build whose request was cancelled while startBuild was still running', async () => {
    const svc = new ScriptedService();
    let release!: () => void;
    svc.startDelay = new Promise((r) => (release = r));
    const c = await connect(svc);
    const ac = new AbortController();
    const call = c.callTool({ name: 'build_engine', arguments: { modelPath: '/m.onnx' } }, undefined, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 20));
    expect(svc.started.length).toBe(1);
    ac.abort();
    await expect(call).rejects.toThrow();
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(svc.cancels).toEqual([{ id: 'b-1', reason: 'user' }]);
  });

  it('passes paths through resolved, and the time budget', async () => {
    const svc = new ScriptedService();
    svc.startError = new ServiceError('bad_input', 'input "input" is dynamic (batch): give shapes');
    const c = await connect(svc);
    const r = await c.callTool({ name: 'build_engine', arguments: { modelPath: 'rel/m.onnx', outputPath: '~/e.engine', timeBudgetSeconds: 4 } });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('Cannot start the build: input "input" is dynamic (batch): give shapes');
    expect(svc.started[0].modelPath).toBe(`${process.cwd()}/rel/m.onnx`);
    expect(svc.started[0].outputPath).toBe(`${os.homedir()}/e.engine`);
    expect(svc.started[0].timeBudgetSeconds).toBe(4);
  });

  it('marks a service bug as an internal error instead of crashing', async () => {
    const c = await connect(new ScriptedService());
    const r = await c.callTool({ name: 'list_backends', arguments: {} });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe('Cannot list backends: internal error: x is not a function');
    const i = await c.callTool({ name: 'inspect_model', arguments: { path: '/nope.onnx' } });
    expect(text(i)).toBe('Cannot inspect /nope.onnx: no such file: /nope.onnx');
  });

  it('answers arguments that do not fit the tool with -32602 and one line, null included, and runs nothing', async () => {
    const service = new ScriptedService();
    const c = await connect(service);
    // The SDK client sends `arguments` as given; the raw request is what a hostile client sends.
    const invalid = async (name: unknown, args: unknown) => {
      const e = await c.request({ method: 'tools/call', params: { name, arguments: args } } as never, CallToolResultSchema).then(
        () => undefined,
        (err: McpError) => err,
      );
      expect(e, `${String(name)} ${JSON.stringify(args)} should be refused`).toBeInstanceOf(McpError);
      expect(e!.code).toBe(-32602);
      const message = e!.message.replace(/^MCP error -32602: /, '');
      expect(message).not.toMatch(/\n/);
      expect(message).not.toMatch(/MCP error/); // not prefixed twice
      return message;
    };
    expect(await invalid('build_engine', null)).toBe('Invalid arguments for tool build_engine: "arguments" must be an object, got null');
    expect(await invalid('list_builds', null)).toMatch(/list_builds: "arguments" must be an object, got null/);
    expect(await invalid('get_build', [1])).toMatch(/"arguments" must be an object, got an array/);
    expect(await invalid('inspect_model', 'x.onnx')).toMatch(/"arguments" must be an object, got a string/);
    expect(await invalid('build_engine', { model: '/m.onnx' })).toMatch(/^Invalid arguments for tool build_engine: .*modelPath.*Unrecognized key: "model"/);
    expect(await invalid('get_build', {})).toMatch(/^Invalid arguments for tool get_build: id: /);
    expect(await invalid('start_build', { modelPath: '/m.onnx', options: { optlevel: 3 } })).toMatch(/options: Unrecognized key: "optlevel"/);
    expect(await invalid('build_engine', { modelPath: '/m.onnx', options: 'fast' })).toMatch(/options: .*expected object/);
    expect(await invalid(42, {})).toMatch(/"name" must be the name of a tool \(a string\), got a number/);
    expect(service.started).toEqual([]);
    // Absent arguments are no arguments, and a well-formed call still runs.
    const r = await c.request({ method: 'tools/call', params: { name: 'list_builds' } }, CallToolResultSchema);
    expect(r.isError).toBeFalsy();
  });
});
