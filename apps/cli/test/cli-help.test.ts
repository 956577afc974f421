// Each command's --help names each of its options once (the options table writes most of them;
// a hand-written line beside it once repeated --reuse, --store-limit and --pinned-cache in
// other words).
import { describe, expect, it } from 'vitest';
import { requireBuilt, runCli } from '../../../test/support/cli.js';

requireBuilt();
describe('--help lists each option once', () => {
  it.each([['build'], ['trtexec'], ['serve'], ['layers'], ['compare'], ['inspect'], ['watch']])('%s --help', async (cmd) => {
    const r = await runCli([cmd, '--help']);
    expect(r.code, r.stderr).toBe(0);
    const flags = [...r.stdout.matchAll(/^\s{2,}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]!);
    expect(flags.length).toBeGreaterThan(0);
    const twice = flags.filter((f, i) => flags.indexOf(f) !== i);
    expect(twice).toEqual([]);
  });
});
