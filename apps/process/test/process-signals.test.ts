// The process's signal hub in-process: signals before anyone listens are kept and handed over in
// order with their ranks; once the exit code is known a signal exits with it after the hard-exit
// hooks. Signals are emitted as events (process.emit), so the test runner itself is untouched;
// the real thing is covered end to end by the CLI and MCP signal tests.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProcessSignals } from '../process-signals.js';

const made: ProcessSignals[] = [];
function hub(): ProcessSignals {
  const s = new ProcessSignals();
  made.push(s);
  return s;
}
const send = (sig: NodeJS.Signals) => process.emit(sig, sig);

afterEach(() => {
  for (const s of made.splice(0)) s.close();
  vi.restoreAllMocks();
});

describe('ProcessSignals', () => {
  it('keeps the signals that came before a listener and hands them over in order, then the live ones', () => {
    const s = hub();
    send('SIGTERM');
    send('SIGINT');
    const got: string[] = [];
    s.listen((sig, n) => got.push(`${n}:${sig}`));
    expect(got).toEqual(['1:SIGTERM', '2:SIGINT']);
    send('SIGINT');
    expect(got).toEqual(['1:SIGTERM', '2:SIGINT', '3:SIGINT']);
    expect(s.count).toBe(3);
  });

  it('a new listener replaces the old one and gets no replay of what the old one had', () => {
    const s = hub();
    const first: number[] = [];
    const second: number[] = [];
    s.listen((_sig, n) => first.push(n));
    send('SIGINT');
    s.listen((_sig, n) => second.push(n));
    send('SIGTERM');
    expect(first).toEqual([1]);
    expect(second).toEqual([2]);
  });

  it('once the exit code is known, a signal runs the hard-exit hooks and exits with that code', () => {
    const s = hub();
    const exit = vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
      throw new Error(`exit ${code}`);
    }) as never);
    const killed: string[] = [];
    s.onHardExit(() => killed.push('workers'));
    const removed = s.onHardExit(() => killed.push('removed hook'));
    removed();
    s.onHardExit(() => {
      throw new Error('a failing hook does not stop the exit');
    });
    const listener = vi.fn();
    s.listen(listener);
    s.exitOnSignal(130);
    expect(() => send('SIGINT')).toThrow('exit 130');
    expect(killed).toEqual(['workers']);
    expect(exit).toHaveBeenCalledWith(130);
    expect(listener).not.toHaveBeenCalled();
  });

  it('exitWith ends the process on the next turn of the event loop, with its code', async () => {
    const s = hub();
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    s.exitWith(2);
    expect(exit).not.toHaveBeenCalled();
    await new Promise((r) => setImmediate(r));
    expect(exit).toHaveBeenCalledWith(2);
  });
});
