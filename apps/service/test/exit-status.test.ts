import { describe, expect, it } from 'vitest';
import { describeExit, fromWaitStatus, signalName } from '../exit-status.js';

describe('worker exit status', () => {
  it('decodes POSIX wait statuses as waitpid returns them', () => {
    expect(fromWaitStatus(0, 'linux')).toEqual({ code: 0, signal: null });
    expect(fromWaitStatus(256, 'linux')).toEqual({ code: 1, signal: null });
    expect(fromWaitStatus(70 << 8, 'linux')).toEqual({ code: 70, signal: null });
    expect(fromWaitStatus(11, 'linux')).toEqual({ code: null, signal: 'SIGSEGV' });
    // With the core-dump bit.
    expect(fromWaitStatus(139, 'linux')).toEqual({ code: null, signal: 'SIGSEGV' });
    expect(fromWaitStatus(6 | 0x80, 'darwin')).toEqual({ code: null, signal: 'SIGABRT' });
    expect(fromWaitStatus(9, 'linux')).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('leaves Windows exit codes and unknown values as they are', () => {
    expect(fromWaitStatus(256, 'win32')).toEqual({ code: 256, signal: null });
    expect(fromWaitStatus(null, 'linux')).toEqual({ code: null, signal: null });
    expect(fromWaitStatus(-1, 'linux')).toEqual({ code: -1, signal: null });
  });

  it('says a signal by name and an exit by code', () => {
    expect(describeExit({ code: null, signal: 'SIGSEGV' })).toBe('signal SIGSEGV');
    expect(describeExit({ code: 1, signal: null })).toBe('exit code 1');
    expect(describeExit({ code: null, signal: null })).toBe('no exit status');
    expect(signalName(15)).toBe('SIGTERM');
    expect(signalName(99)).toBe('signal 99');
  });
});
