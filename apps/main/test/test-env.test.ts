import { describe, expect, it } from 'vitest';
import { createDialogs } from '../dialogs.js';
import { dropTestOnlyEnv } from '../test-env.js';
import { vi } from 'vitest';

vi.mock('electron', () => ({ dialog: { showOpenDialog: () => Promise.resolve({ canceled: true, filePaths: [] }) } }));

describe('test-only variables', () => {
  const env = () => ({ TBS_TEST_EXIT_BEFORE_MANIFEST: '1', TBS_E2E_OPEN: '/tmp/x.onnx', TBS_E2E_SAVE: '/etc/passwd', TBS_TRT_LIB_DIR: '/opt/trt', PATH: '/usr/bin' });

  it('are removed from a packaged app before anything reads them; the rest stays', () => {
    const e: NodeJS.ProcessEnv = env();
    expect(dropTestOnlyEnv(e, true).sort()).toEqual(['TBS_E2E_OPEN', 'TBS_E2E_SAVE', 'TBS_TEST_EXIT_BEFORE_MANIFEST']);
    expect(e).toEqual({ TBS_TRT_LIB_DIR: '/opt/trt', PATH: '/usr/bin' });
  });

  it('stay in the unpackaged app (tests and e2e use them)', () => {
    const e: NodeJS.ProcessEnv = env();
    expect(dropTestOnlyEnv(e, false)).toEqual([]);
    expect(e).toEqual(env());
  });

  it('so a packaged app shows the real dialog even with TBS_E2E_OPEN planted', async () => {
    const e: NodeJS.ProcessEnv = env();
    dropTestOnlyEnv(e, true);
    // The dialog module reads what is left; the real (mocked) dialog answers: cancelled.
    expect(await createDialogs(e, { isPackaged: true }).chooseModel(null)).toBeNull();
    expect(await createDialogs(env(), { isPackaged: false }).chooseModel(null)).toBe('/tmp/x.onnx');
  });
});
