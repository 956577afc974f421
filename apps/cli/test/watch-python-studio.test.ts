// The Python drop-in (`config.progress_monitor = trt_build_studio.monitor()`) run without watch,
// finding a running studio by itself: the studio here is the desktop app's call
// (startDesktopStudio, what apps/main/main.ts starts; Electron cannot run here) over a real
// BuildService, publishing itself in a private XDG_RUNTIME_DIR. The program is real python3 over
// the stand-in `tensorrt` (test/support/fake-tensorrt: written from the documented API, NOT
// NVIDIA's bindings).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBuildService } from '../../service/build-service.js';
import { startDesktopStudio, type StudioProbe } from '../../service/watched/studio-probe.js';
import { PYTHON_PKG, runPython } from '../../../test/support/fake-tensorrt/python-probe';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function until(what: string, pred: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the Python drop-in and a running studio', () => {
  it('the build shows in the studio, labelled as watched, and Stop there makes the program’s build return None', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'xdg-'));
    cleanup.push(() => fs.rmSync(xdg, { recursive: true, force: true }));
    const service = createBuildService({ profiles: null });
    const s = (await startDesktopStudio(service, () => {}, { XDG_RUNTIME_DIR: xdg })) as StudioProbe;
    cleanup.push(() => s.close());
    const program = runPython(
      `
import json
import tensorrt as trt
import trt_build_studio as tbs
b = trt.Builder(); n = b.create_network(); n.name = "resnet"
c = b.create_builder_config(); c.progress_monitor = tbs.monitor()
r = b.build_serialized_network(n, c)
print("RESULT " + json.dumps({"size": None if r is None else len(r)}), flush=True)
`,
      { hook: false, extraPath: [PYTHON_PKG], env: { XDG_RUNTIME_DIR: xdg, FAKE_TRT_STEP_DELAY: '0.002' } },
    );
    await until('the build listed and running', () => service.listBuilds().length === 1 && (service.getView(service.listBuilds()[0].id)?.seq ?? 0) >= 2);
    const [rec] = service.listBuilds();
    expect(rec).toMatchObject({ state: 'running', backend: 'tensorrt', backendVersion: '10.16.0+standin', watched: { probe: 'python', api: 'IProgressMonitor', chained: false } });
    expect(rec.modelPath).toMatch(/prog\.py/);
    expect(service.cancelBuild(rec.id, 'user')).toBe(true);
    const r = await program;
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('RESULT {"size": null}');
    // No terminal drawing: the studio was found.
    expect(r.stdout).not.toContain('[trt-build-studio]');
    const f = await service.waitForResult(rec.id);
    expect(f).toMatchObject({ status: 'cancelled' });
  });
});
