import { describe, expect, it } from 'vitest';
import { applyChromiumSwitches } from '../chromium-switches.js';

describe('Chromium switches', () => {
  it('requires file-chooser portal version 4 on Linux (older portals ignore the dialog folder)', () => {
    const added: Array<[string, string | undefined]> = [];
    applyChromiumSwitches({ appendSwitch: (n, v) => added.push([n, v]) }, 'linux');
    expect(added).toEqual([['xdg-portal-required-version', '4']]);
    added.length = 0;
    applyChromiumSwitches({ appendSwitch: (n, v) => added.push([n, v]) }, 'darwin');
    expect(added).toEqual([]);
  });
});
