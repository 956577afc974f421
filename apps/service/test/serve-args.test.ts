// `serve`'s command line, parsed without starting anything: the farm's Redis limits and the
// flags that only make sense with a farm.
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from '../http/serve-args.js';

describe('serve arguments', () => {
  it("sizes the farm's Redis: events per build and builds in the history", () => {
    const a = parseServeArgs(['--queue', 'redis://127.0.0.1:6379', '--farm-events-per-build', '5000', '--farm-history', '200']);
    expect(a).toMatchObject({ queue: 'redis://127.0.0.1:6379', farmEventsPerBuild: 5000, farmHistory: 200 });
    const d = parseServeArgs(['--queue', 'redis://127.0.0.1:6379']);
    expect(d.farmEventsPerBuild).toBeUndefined();
    expect(d.farmHistory).toBeUndefined();
  });

  it.each([
    [['--farm-history', '10'], /--farm-history needs --queue/],
    [['--farm-events-per-build', '500'], /--farm-events-per-build needs --queue/],
    [['--queue', 'redis://h', '--farm-events-per-build', '50'], /--farm-events-per-build: expected an integer from 100 to 10000000, got "50"/],
    [['--queue', 'redis://h', '--farm-history', '0'], /--farm-history: expected an integer from 1 to 1000000, got "0"/],
    [['--queue', 'redis://h', '--farm-history', '1e3'], /--farm-history: expected an integer/],
    [['--artifacts', '/tmp/a'], /--artifacts needs --queue/],
    [['--host', 'example.com'], /--host: "example.com" is not an IP address/],
  ])('%j is a usage error', (argv, msg) => {
    expect(() => parseServeArgs(argv)).toThrow(msg);
  });
});
