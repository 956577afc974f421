import { describe, expect, it, vi } from 'vitest';
import { askStopRunningBuild, KEEP_BUILDING, STOP_AND_QUIT } from '../stop-confirm.js';

describe('the question before a running build is stopped by a quit', () => {
  it('defaults to Keep building (Enter and Esc keep it), and stops only on "Stop and quit"', async () => {
    const dialog = { showMessageBox: vi.fn(async () => ({ response: KEEP_BUILDING })) };
    expect(await askStopRunningBuild(dialog, null, 1)).toBe(false);
    const opts = dialog.showMessageBox.mock.calls[0][1];
    expect(opts.message).toBe('A build is running.');
    expect(opts.buttons[opts.defaultId]).toBe('Keep building');
    expect(opts.buttons[opts.cancelId]).toBe('Keep building');
    expect(opts.buttons[STOP_AND_QUIT]).toBe('Stop and quit');
    dialog.showMessageBox.mockResolvedValueOnce({ response: STOP_AND_QUIT });
    expect(await askStopRunningBuild(dialog, null, 3)).toBe(true);
    expect(dialog.showMessageBox.mock.calls[1][1].message).toBe('3 builds are running.');
  });
});
