// trtBuildStudio.build cancelled early, against a scripted service (the timing cannot be had from
// a real one on demand): a $/cancelRequest before the build is started starts nothing; one that
// comes while startBuild is on its way stops the build once it has an id, with one cancel (a
// second would kill its worker), and the request ends cancelled with the build's result.
import { CancellationTokenSource, LSPErrorCodes, ResponseError } from 'vscode-languageserver/node';
import { describe, expect, it } from 'vitest';
import type { BuildServiceApi, StartBuildInput, Subscription } from '../../service/api.js';
import type { BuildEvent, BuildFinished, BuildRecord, CancelReason, ModelSummary } from '../../shared/protocol.js';
import { CancelReasons } from '../../surface/cancel-reasons.js';
import { ActiveBuilds, runBuildCommand, type LspBuildResult, type LspPort } from '../build-command.js';

class Scripted {
  started: StartBuildInput[] = [];
  cancels: Array<{ id: string; reason?: CancelReason }> = [];
  startGate?: Promise<void>;
  private finish?: (f: BuildFinished) => void;
  readonly record: BuildRecord = { id: 'b-1', state: 'queued', modelPath: '/m.onnx', options: {}, queuedAt: new Date().toISOString(), lastSeq: -1, engineAvailable: false };
  inspectModel = async () => ({ inputs: [], outputs: [] }) as unknown as ModelSummary;
  startBuild = async (input: StartBuildInput) => {
    this.started.push(input);
    await this.startGate;
    return this.record;
  };
  cancelBuild = (id: string, reason?: CancelReason) => {
    this.cancels.push({ id, reason });
    // The build ends cancelled a moment later (the run waits for its result by then).
    setTimeout(() => this.finish?.({ v: 1, buildId: id, seq: 5, t: 1, type: 'build.finished', status: 'cancelled', durationMs: 1000, cancelLatencyMs: 2 }), 5);
    return true;
  };
  subscribe = (_id: string, _onEvents: (events: BuildEvent[]) => unknown): Subscription => ({ snapshot: this.record, unsubscribe: () => undefined });
  waitForResult = () => new Promise<BuildFinished>((resolve) => (this.finish = resolve));
  getBuild = () => this.record;
  listBuilds = () => [this.record];
}

const port: LspPort = {
  sendProgress: () => undefined,
  sendNotification: () => undefined,
  publishDiagnostics: () => undefined,
  createProgressToken: async () => undefined,
  log: () => undefined,
};

const command = (svc: Scripted, source: CancellationTokenSource) =>
  runBuildCommand(
    { service: svc as unknown as BuildServiceApi, reasons: new CancelReasons(), active: new ActiveBuilds(), port, viewIntervalMs: 0 },
    { modelPath: '/m.onnx' },
    { cancel: source.token },
  );

describe('trtBuildStudio.build cancelled before its build runs', () => {
  it('starts nothing when the request was cancelled before the build was started', async () => {
    const svc = new Scripted();
    const source = new CancellationTokenSource();
    svc.inspectModel = async () => {
      source.cancel(); // while the model is read
      return { inputs: [], outputs: [] } as unknown as ModelSummary;
    };
    const e = (await command(svc, source).catch((err: unknown) => err)) as ResponseError<unknown>;
    expect(e).toBeInstanceOf(ResponseError);
    expect(e.code).toBe(LSPErrorCodes.RequestCancelled);
    expect(e.message).toBe('trtBuildStudio.build: cancelled before the build started');
    await new Promise((r) => setTimeout(r, 20));
    expect(svc.started).toEqual([]);
    expect(svc.cancels).toEqual([]);
  });

  it('stops a build whose request was cancelled while startBuild was on its way, with one cancel', async () => {
    const svc = new Scripted();
    let release!: () => void;
    svc.startGate = new Promise((r) => (release = r));
    const source = new CancellationTokenSource();
    const call = command(svc, source).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 20));
    expect(svc.started.length).toBe(1);
    source.cancel();
    release();
    const e = (await call) as ResponseError<LspBuildResult>;
    expect(e.code).toBe(LSPErrorCodes.RequestCancelled);
    expect(e.data?.status).toBe('cancelled');
    expect(e.data?.cancelReason).toBe('user');
    await new Promise((r) => setTimeout(r, 20));
    expect(svc.cancels).toEqual([{ id: 'b-1', reason: 'user' }]);
  });
});
