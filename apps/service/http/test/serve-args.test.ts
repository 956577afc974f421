import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../shared/usage-error.js';
import { DEFAULT_PORT, isLoopback, parseServeArgs, uiUrl } from '../serve-args.js';

describe('serve arguments', () => {
  it('defaults to 127.0.0.1:8177 with no token', () => {
    expect(parseServeArgs([])).toMatchObject({ port: DEFAULT_PORT, host: '127.0.0.1', token: undefined, help: false });
    expect(DEFAULT_PORT).toBe(8177);
  });

  it('parses every flag', () => {
    const a = parseServeArgs([
      '--port',
      '0',
      '--host',
      '::1',
      '--token',
      'abc-DEF_1.~+/=',
      '--output-dir',
      'out',
      '--concurrency',
      '2',
      '--heartbeat-ms',
      '50',
      '--keep-build-details',
      '0',
    ]);
    expect(a).toMatchObject({ port: 0, host: '::1', token: 'abc-DEF_1.~+/=', concurrency: 2, heartbeatMs: 50, keepBuildDetails: 0 });
    expect(a.outputDir).toMatch(/^\/.*\/out$/);
  });

  it('names the flag in every usage error', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--port', '70000'], /--port/],
      [['--port', '-1'], /--port/],
      [['--port', '8x'], /--port/],
      [['--host', 'example.com'], /--host/],
      [['--token', 'has space'], /--token/],
      [['--token', 'semi;colon'], /--token/],
      [['--concurrency', '0'], /--concurrency/],
      [['--bogus'], /bogus/],
      [['positional'], /positional/],
    ];
    for (const [argv, re] of cases) {
      expect(() => parseServeArgs(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parseServeArgs(argv), argv.join(' ')).toThrow(re);
    }
  });

  it('knows loopback addresses and prints a reachable URL', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('0.0.0.0')).toBe(false);
    expect(isLoopback('192.168.1.5')).toBe(false);
    expect(uiUrl('127.0.0.1', 9000, 'a/b=')).toBe('http://127.0.0.1:9000/?token=a%2Fb%3D');
    expect(uiUrl('0.0.0.0', 9000, 't')).toBe('http://127.0.0.1:9000/?token=t');
    expect(uiUrl('::1', 9000, 't')).toBe('http://[::1]:9000/?token=t');
  });
});
