// The shared run of a build (run-build.ts, run-matrix.ts) and the one record of stop requests
// (cancel-reasons.ts), against a scripted service: a stop asked before the build exists, while
// startBuild is on its way and after; the live view followed, ended and released; and the rule
// that the CLI, MCP and LSP start builds only through the shared run, read from their sources.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BuildServiceApi, StartBuildInput, Subscription } from '../../service/api.js';
import { LiveView } from '../../shared/live-view.js';
import type { BuildEvent, BuildFinished, BuildRecord, CancelReason } from '../../shared/protocol.js';
import { CancelReasons, RunStop, runBuild, StoppedBeforeStart } from '../run-build.js';
import { runMatrix } from '../run-matrix.js';

const finishedEvent = (id: string, status: BuildFinished['status'], seq = 10): BuildFinished => ({
  v: 1,
  buildId: id,
  seq,
  t: 1,
  type: 'build.finished',
  status,
  durationMs: 1000,
});

/** A service whose builds start when told to and end when told to; it records every call. */
class Scripted {
  calls: string[] = [];
  cancels: Array<{ id: string; reason?: CancelReason }> = [];
  subscribers = 0;
  startGate?: Promise<void>;
  waitError?: Error;
  private finishers = new Map<string, (f: BuildFinished) => void>();
  private listeners = new Map<string, (events: BuildEvent[]) => unknown>();
  private next = 1;

  record(id: string): BuildRecord {
    return { id, state: 'queued', modelPath: '/m.onnx', options: {}, queuedAt: new Date(0).toISOString(), lastSeq: -1, engineAvailable: false };
  }
  startBuild = async (_input: StartBuildInput): Promise<BuildRecord> => {
    this.calls.push('startBuild');
    await this.startGate;
    return this.record(`b-${this.next++}`);
  };
  startMatrix = async (input: { targets: unknown[] }): Promise<BuildRecord[]> => {
    this.calls.push('startMatrix');
    await this.startGate;
    return input.targets.map(() => this.record(`b-${this.next++}`));
  };
  cancelBuild = (id: string, reason?: CancelReason): boolean => {
    this.calls.push(`cancel ${id}`);
    this.cancels.push({ id, reason });
    return true;
  };
  subscribe = (id: string, onEvents: (events: BuildEvent[]) => unknown): Subscription => {
    this.calls.push(`subscribe ${id}`);
    this.subscribers++;
    this.listeners.set(id, onEvents);
    return {
      snapshot: this.record(id),
      unsubscribe: () => {
        this.calls.push(`unsubscribe ${id}`);
        this.subscribers--;
        this.listeners.delete(id);
      },
    };
  };
  waitForResult = (id: string): Promise<BuildFinished> => {
    if (this.waitError) return Promise.reject(this.waitError);
    return new Promise((resolve) => this.finishers.set(id, resolve));
  };
  emit(id: string, events: BuildEvent[]): void {
    this.listeners.get(id)?.(events);
  }
  end(id: string, status: BuildFinished['status']): void {
    this.finishers.get(id)?.(finishedEvent(id, status));
  }
  getBuild = (id: string) => this.record(id);
  getView = () => undefined;
  listBuilds = () => [];
  service(): BuildServiceApi {
    return this as unknown as BuildServiceApi;
  }
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const input: StartBuildInput = { modelPath: '/m.onnx' };

describe('runBuild', () => {
  it('starts nothing when a stop was asked before it began, unless told to start stopped', async () => {
    const svc = new Scripted();
    const stop = new RunStop();
    stop.request('user', 'request');
    await expect(runBuild(svc.service(), input, { stop })).rejects.toBeInstanceOf(StoppedBeforeStart);
    expect(svc.calls).toEqual([]);

    // The CLI's way: the build starts and is cancelled once it has an id, after it is followed.
    const cli = new RunStop();
    cli.request('user', 'signal');
    const run = runBuild(svc.service(), input, { stop: cli, startStopped: true, follow: (r) => new LiveView(r.id).follow(svc.service()) });
    await tick();
    expect(svc.calls).toEqual(['startBuild', 'subscribe b-1', 'cancel b-1']);
    svc.end('b-1', 'cancelled');
    const { reason, finished } = await run;
    expect(finished.status).toBe('cancelled');
    expect(reason).toBe('user');
    expect(cli.count('signal')).toBe(1);
  });

  it('sends a stop asked while startBuild was on its way once the build has an id, and one asked later at once', async () => {
    const svc = new Scripted();
    let release!: () => void;
    svc.startGate = new Promise((r) => (release = r));
    const reasons = new CancelReasons();
    const sent: boolean[] = [];
    const stop = new RunStop(reasons, { send: (_r, send) => (sent.push(send()), sent.at(-1)!) });
    const run = runBuild(svc.service(), input, { stop });
    await tick();
    expect(stop.request('user', 'request')).toBe(false); // waits: no build yet
    expect(svc.cancels).toEqual([]);
    expect(stop.asked('request')).toBe(true);
    release();
    await tick();
    expect(svc.cancels).toEqual([{ id: 'b-1', reason: 'user' }]);
    expect(stop.buildId).toBe('b-1');
    // A second request escalates (the service kills the worker): it is sent at once.
    expect(stop.request('user', 'command')).toBe(true);
    expect(svc.cancels.length).toBe(2);
    expect(sent).toEqual([true, true]);
    expect(reasons.requests('b-1')).toBe(2);
    expect(reasons.requests('b-1', 'command')).toBe(1);
    svc.end('b-1', 'cancelled');
    expect((await run).reason).toBe('user');
    expect(reasons.get('b-1')).toBe('user');
  });

  it("sends a reader's stop before the build exists only when nothing else asked; send: false only counts", async () => {
    const svc = new Scripted();
    const both = new RunStop();
    both.request('user', 'signal');
    both.request('user', 'reader', { ifAlone: true });
    const a = runBuild(svc.service(), input, { stop: both, startStopped: true });
    await tick();
    expect(svc.cancels.length).toBe(1);
    expect(both.asked('reader')).toBe(true);
    both.request('user', 'signal', { send: false });
    expect(svc.cancels.length).toBe(1);
    expect(both.count('signal')).toBe(2);
    svc.end('b-1', 'cancelled');
    await a;

    const alone = new RunStop();
    alone.request('user', 'reader', { ifAlone: true });
    const b = runBuild(svc.service(), input, { stop: alone, startStopped: true });
    await tick();
    expect(svc.cancels.map((c) => c.id)).toEqual(['b-1', 'b-2']);
    svc.end('b-2', 'cancelled');
    await b;
  });

  it('follows the build with the surface view, ends the view with the result and releases it; the view says why first', async () => {
    const svc = new Scripted();
    const order: string[] = [];
    const stop = new RunStop();
    const run = runBuild(svc.service(), input, {
      stop,
      onStarted: (r) => void order.push(`started ${r.id}`),
      follow: (r) => (order.push('follow'), new LiveView(r.id).follow(svc.service())),
      onEnded: (f) => void order.push(`ended ${f.status}`),
      drain: async (live) => void order.push(`drain ${live.buildId}`),
    });
    await tick();
    expect(svc.subscribers).toBe(1);
    // The service said the build stops for its time budget; the record says "user" (asked later).
    svc.emit('b-1', [{ v: 1, buildId: 'b-1', seq: 0, t: 0.5, type: 'build.cancelling', reason: 'timeout' } as BuildEvent]);
    stop.request('user', 'command');
    svc.end('b-1', 'cancelled');
    const r = await run;
    expect(order).toEqual(['started b-1', 'follow', 'ended cancelled', 'drain b-1']);
    expect(svc.subscribers).toBe(0);
    expect(r.live?.view.outcome?.status).toBe('cancelled');
    expect(r.reason).toBe('timeout');
  });

  it('releases the view when the result cannot be had, and tells a failed follow without stopping the run', async () => {
    const svc = new Scripted();
    svc.waitError = new Error('gone');
    await expect(runBuild(svc.service(), input, { follow: (r) => new LiveView(r.id).follow(svc.service()) })).rejects.toThrow('gone');
    expect(svc.subscribers).toBe(0);

    const ok = new Scripted();
    const told: string[] = [];
    const run = runBuild(ok.service(), input, {
      follow: () => {
        throw new Error('no such build');
      },
      onFollowError: (e, r) => void told.push(`${r.id}: ${(e as Error).message}`),
    });
    await tick();
    ok.end('b-1', 'succeeded');
    const r = await run;
    expect(told).toEqual(['b-1: no such build']);
    expect(r.live).toBeUndefined();
    await expect(
      runBuild(new Scripted().service(), input, {
        follow: () => {
          throw new Error('no such build');
        },
      }),
    ).rejects.toThrow('no such build');
  });
});

describe('runMatrix', () => {
  it('stops every build of a matrix asked to stop while the farm was queueing them', async () => {
    const svc = new Scripted();
    let release!: () => void;
    svc.startGate = new Promise((r) => (release = r));
    const stop = new RunStop();
    const run = runMatrix(svc.service(), { modelPath: '/m.onnx', targets: [{ gpu: 'a' }, { gpu: 'b' }] }, { stop });
    await tick();
    stop.request('user', 'request');
    release();
    await tick();
    expect(svc.cancels).toEqual([
      { id: 'b-1', reason: 'user' },
      { id: 'b-2', reason: 'user' },
    ]);
    svc.end('b-1', 'cancelled');
    svc.end('b-2', 'cancelled');
    const { ids, result } = await run;
    expect(ids).toEqual(['b-1', 'b-2']);
    expect(result.builds.map((b) => [b.status, b.cancelReason])).toEqual([
      ['cancelled', 'user'],
      ['cancelled', 'user'],
    ]);
  });
});

// ───────────── the CLI, MCP and LSP start builds only through the shared run ─────────────

const ROOT = path.resolve(__dirname, '../../..');
const SURFACE_ROOMS = ['apps/cli', 'apps/mcp', 'apps/lsp'];

/**
 * Every use of a service's startBuild/startMatrix in `source` other than asking whether the
 * service has it (`if (service.startMatrix)`, `!service.startMatrix`, `service.startMatrix ? … : …`):
 * a call, a reference passed on, an element access by name, a destructuring. Comments are
 * dropped first (as test/support/source-imports.ts does); names inside other words
 * (startBuildTool) are not these.
 */
function directStarts(fileName: string, source: string): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .split('\n')
    .map((line) => line.replace(/(^|\s)\/\/.*$/, ''))
    .join('\n');
  const found: string[] = [];
  const at = (i: number) => `${fileName}:${code.slice(0, i).split('\n').length}: ${code.slice(i).split('\n')[0].trim().slice(0, 80)}`;
  // service.startBuild(…), deps.service.startMatrix!(…), const f = service.startBuild, …?.startBuild
  for (const m of code.matchAll(/\??\.\s*(?:startBuild|startMatrix)\b/g)) {
    const receiverStart = code.slice(0, m.index).search(/[\w$.?!]*$/);
    const before = code.slice(0, receiverStart);
    const after = code.slice(m.index + m[0].length);
    const presence =
      /!\s*$/.test(before) || // !service.startMatrix
      (/\bif\s*\(\s*$/.test(before) && /^\s*\)/.test(after)) || // if (service.startMatrix)
      /^\s*\?(?!\.)/.test(after); // service.startMatrix ? … : …
    if (!presence) found.push(at(receiverStart));
  }
  // service['startBuild'], const { startBuild } = service, const { startMatrix: go } = service
  for (const m of code.matchAll(/\[\s*['"`](?:startBuild|startMatrix)['"`]\s*\]/g)) found.push(at(m.index));
  for (const m of code.matchAll(/\{[^{}]*\b(?:startBuild|startMatrix)\b[^{}]*\}\s*=(?!=)/g)) found.push(at(m.index));
  return found;
}

function sourcesOf(room: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'test' && e.name !== 'node_modules') walk(p);
      } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
    }
  };
  walk(path.join(ROOT, room));
  return out;
}

describe('the surfaces start builds only through the shared run', () => {
  it('finds a direct start in any of its forms, and lets a check for a farm pass', () => {
    const bad = [
      'await service.startBuild(input);',
      'const r = await deps.service.startMatrix!(input);',
      'const start = service.startBuild; start(input);',
      "await service['startBuild'](input);",
      'const { startBuild } = service;',
      'const { startMatrix: go } = service;',
    ];
    for (const line of bad) expect(directStarts('x.ts', line), line).toHaveLength(1);
    const fine = ['if (!service.startMatrix) throw new Error("no farm");', 'if (service.startMatrix) register();', 'const tools = service.startMatrix ? { a: 1 } : {};'];
    for (const line of fine) expect(directStarts('x.ts', line), line).toEqual([]);
  });

  it('finds none in apps/cli, apps/mcp or apps/lsp (they call runBuild, startBuildUnfollowed or runMatrix)', () => {
    const files = SURFACE_ROOMS.flatMap(sourcesOf);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((f) => directStarts(path.relative(ROOT, f), fs.readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });
});
