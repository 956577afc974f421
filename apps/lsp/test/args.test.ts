// `trt-build-studio lsp` arguments: what editors pass (--stdio) is accepted, mistakes are named.
import { describe, expect, it } from 'vitest';
import * as path from 'node:path';
import { UsageError } from '../../shared/usage-error.js';
import { parseLspArgs } from '../command.js';

describe('parseLspArgs', () => {
  it('accepts --stdio, --output-dir and --heartbeat (both spellings)', () => {
    expect(parseLspArgs(['--stdio'])).toEqual({});
    expect(parseLspArgs(['--output-dir', 'engines', '--heartbeat=0.5'])).toEqual({ outputDir: path.resolve('engines'), heartbeatMs: 500 });
    expect(parseLspArgs(['--help'])).toBe('help');
    // A build farm: the build command then takes target, retries and targets.
    expect(parseLspArgs(['--queue', 'redis://127.0.0.1:6379'])).toEqual({ queue: 'redis://127.0.0.1:6379' });
  });

  it('names what is wrong', () => {
    expect(() => parseLspArgs(['--socket=5000'])).toThrow(new UsageError('unknown argument "--socket=5000" (see trt-build-studio lsp --help)'));
    expect(() => parseLspArgs(['--heartbeat', '0'])).toThrow('--heartbeat must be between 0.2 and 60 seconds, got "0"');
    expect(() => parseLspArgs(['--output-dir'])).toThrow('--output-dir needs a value');
  });
});
