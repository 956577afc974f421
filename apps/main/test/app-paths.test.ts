import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADDON_FILE, resolveAppLayout, unpackedPath } from '../app-paths.js';

describe('app layout', () => {
  it("in development, points into the repo and leaves the addon to the worker's own lookup", () => {
    const l = resolveAppLayout('/repo', '/repo/dist/apps/main', false, {});
    expect(l).toEqual({
      rendererDir: '/repo/dist/renderer',
      preloadPath: '/repo/dist/apps/main/preload.cjs',
      iconPath: '/repo/packaging/icon.png',
      workerPath: '/repo/dist/apps/worker/worker.js',
      workerEnv: {},
    });
  });

  it("when packaged, hands the worker the unpacked addon's real path", () => {
    const resources = mkdtempSync(path.join(os.tmpdir(), 'tbs-res-'));
    const asar = path.join(resources, 'app.asar');
    const addonDir = path.join(`${asar}.unpacked`, 'build', 'native', 'Release');
    mkdirSync(addonDir, { recursive: true });
    writeFileSync(path.join(addonDir, ADDON_FILE), '');
    const l = resolveAppLayout(asar, path.join(asar, 'dist/apps/main'), true, {});
    expect(l.workerEnv).toEqual({ TBS_ADDON_PATH: path.join(addonDir, ADDON_FILE) });
    expect(l.workerPath).toBe(path.join(asar, 'dist/apps/worker/worker.js'));
  });

  it('when packaged without the addon, says nothing (the worker reports it missing)', () => {
    const resources = mkdtempSync(path.join(os.tmpdir(), 'tbs-res-'));
    expect(resolveAppLayout(path.join(resources, 'app.asar'), '/x', true, {}).workerEnv).toEqual({});
  });

  it('an explicit TBS_ADDON_PATH wins everywhere', () => {
    expect(resolveAppLayout('/repo', '/repo/dist/apps/main', false, { TBS_ADDON_PATH: '/opt/x.node' }).workerEnv).toEqual({ TBS_ADDON_PATH: '/opt/x.node' });
  });

  it('maps app.asar to its unpacked twin', () => {
    expect(unpackedPath('/opt/app/resources/app.asar')).toBe('/opt/app/resources/app.asar.unpacked');
    expect(unpackedPath('/opt/app/resources/app')).toBe('/opt/app/resources/app');
  });
});
