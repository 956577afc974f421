// The studio side of watched builds in-process: the desktop app's call (startDesktopStudio, which
// apps/main/main.ts makes; Electron itself cannot run here) over a real BuildService and a real
// Unix socket, with probe lines written by the test as a probe would write them.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { createBuildService } from '../build-service.js';
import { findStudios } from '../studio-registry.js';
import { startDesktopStudio, type StudioProbe } from '../watched/studio-probe.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function until(what: string, pred: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function studio() {
  const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-studio-'));
  cleanup.push(() => fs.rmSync(xdg, { recursive: true, force: true }));
  const env = { XDG_RUNTIME_DIR: xdg };
  const service = createBuildService({ profiles: null });
  const logs: string[] = [];
  const s = (await startDesktopStudio(service, (m) => logs.push(m), env)) as StudioProbe;
  cleanup.push(() => s.close());
  return { env, service, s, logs };
}

function probe(socketPath: string) {
  const sock = net.connect(socketPath);
  cleanup.push(() => sock.destroy());
  let got = '';
  sock.setEncoding('utf8');
  sock.on('data', (c: string) => (got += c));
  return { send: (o: object) => sock.write(`${JSON.stringify(o)}\n`), got: () => got, sock };
}

describe('a studio takes watched builds', () => {
  it('publishes itself (desktop: no URL), lists the build with its label, streams it, and Stop sends the probe its cancel', async () => {
    const { env, service, s } = await studio();
    const found = findStudios(env).studios;
    expect(found).toEqual([{ v: 1, pid: process.pid, probeSocket: s.probeSocket, kind: 'desktop' }]);
    const p = probe(s.probeSocket);
    p.send({ type: 'hello', v: 1, probe: 'cpp-shim', pid: 777, argv: ['trtexec', '--onnx=m.onnx'], trtVersion: '10.8.0' });
    p.send({ type: 'build.begin', build: 1, api: 'IBuilder::buildSerializedNetwork', chained: true });
    p.send({ type: 'phase.start', build: 1, t: 1, name: 'Building', parent: null, steps: 4 });
    await until('the build listed', () => service.listBuilds().length === 1 && service.getView(service.listBuilds()[0].id)!.seq >= 1);
    const [rec] = service.listBuilds();
    expect(rec).toMatchObject({
      state: 'running',
      backend: 'tensorrt',
      backendVersion: '10.8.0',
      engineAvailable: false,
      watched: { program: 'trtexec', pid: 777, probe: 'cpp-shim', chained: true },
    });
    expect(rec.modelPath).toBe('trtexec --onnx=m.onnx (pid 777)');
    const seen: BuildEvent[] = [];
    const sub = service.subscribe(rec.id, (evs) => void seen.push(...evs), { afterSeq: -1 });
    cleanup.push(() => sub.unsubscribe());
    expect(service.cancelBuild(rec.id, 'user')).toBe(true);
    await until('the cancel line', () => p.got().includes('"cancel"'));
    expect(JSON.parse(p.got().trim())).toEqual({ type: 'cancel', build: 1 });
    expect(service.getBuild(rec.id)!.state).toBe('cancelling');
    p.send({ type: 'phase.finish', build: 1, t: 2, name: 'Building' });
    p.send({ type: 'build.end', build: 1, t: 2.5, result: 'null', cancelled: true });
    const f = await service.waitForResult(rec.id);
    expect(f).toMatchObject({ status: 'cancelled' });
    expect(seen.map((e) => e.type)).toEqual(['build.started', 'phase.start', 'build.cancelling', 'phase.finish', 'build.finished']);
    expect(service.cancelBuild(rec.id)).toBe(false);
  });

  it('a connection closed mid-build makes it crashed; a probe that says nonsense is a log line, not a build', async () => {
    const { service, s, logs } = await studio();
    const p = probe(s.probeSocket);
    p.send({ type: 'phase.start', build: 1, t: 1, name: 'x', parent: null, steps: 1 });
    p.sock.write('not json\n');
    p.send({ type: 'hello', v: 1, probe: 'python', pid: 9, argv: ['python', 'b.py'] });
    p.send({ type: 'build.begin', build: 1 });
    p.send({ type: 'phase.start', build: 1, t: 1, name: 'Outer', parent: null, steps: 1 });
    p.send({ type: 'phase.start', build: 1, t: 2, name: 'Inner', parent: 'Outer', steps: 1 });
    await until('the phases', () => service.listBuilds().length === 1 && service.getView(service.listBuilds()[0].id)!.seq >= 2);
    p.sock.end();
    const f = await service.waitForResult(service.listBuilds()[0].id);
    expect(f).toMatchObject({ status: 'crashed', lastPhasePath: ['Outer', 'Inner'] });
    expect(logs.some((l) => l.includes('phase.start before its hello'))).toBe(true);
    expect(logs.some((l) => l.includes('not JSON'))).toBe(true);
  });

  it('close() unpublishes; the BuildService shutdown leaves a watched build to its program', async () => {
    const { env, service, s } = await studio();
    const p = probe(s.probeSocket);
    p.send({ type: 'hello', v: 1, probe: 'python', pid: 9, argv: ['python', 'b.py'] });
    p.send({ type: 'build.begin', build: 1 });
    await until('the build', () => service.listBuilds().length === 1);
    await service.shutdown();
    expect(p.got()).toBe(''); // no cancel: the program's build is not the studio's to stop
    await s.close();
    expect(findStudios(env).studios).toEqual([]);
  });
});
