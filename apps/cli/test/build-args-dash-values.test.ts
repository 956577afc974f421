// Values that start with a dash, as trtexec users write them (`--tactic-sources -CUBLAS,+CUDNN`,
// `--preview -runtimeActivationResize`, a build route `-conv_use_long_w=off`): taken after any
// flag that takes a value, in the space form as in the `=` form, by `build` and by the commands
// that read build options (`check`). A forgotten value is one line naming the flag.
import { describe, expect, it } from 'vitest';
import { parseBuildArgs, parseBuildOptionFlags } from '../build-args.js';
import { UsageError } from '../../shared/usage-error.js';

const options = (...flags: string[]) => parseBuildArgs(['m.onnx', '-o', 'e.engine', ...flags]).input.options;

describe('flag values that start with a dash', () => {
  it('are taken after a flag that takes a value, as with =', () => {
    expect(options('--tactic-sources', '-CUBLAS')).toMatchObject({ tacticSources: '-CUBLAS' });
    expect(options('--tactic-sources', '-CUBLAS,+CUDNN')).toMatchObject({ tacticSources: '-CUBLAS,+CUDNN' });
    expect(options('--tactic-sources=-CUBLAS,+CUDNN')).toMatchObject({ tacticSources: '-CUBLAS,+CUDNN' });
    expect(options('--preview', '-runtimeActivationResize')).toMatchObject({ previewFeatures: '-runtimeActivationResize' });
    expect(options('--build-route', '-conv_use_long_w=off')).toMatchObject({ buildRoute: '-conv_use_long_w=off' });
    // The flags around it keep their meaning.
    const all = parseBuildArgs(['--tactic-sources', '-CUDNN', 'm.onnx', '--fp16', '-o', 'e.engine', '--json']);
    expect(all).toMatchObject({ json: true, input: { modelPath: 'm.onnx', outputPath: 'e.engine', options: { tacticSources: '-CUDNN', precision: ['fp16'] } } });
  });

  it('are checked as the value they are (a bad one names its flag; a negative number is out of range)', () => {
    expect(() => options('--tactic-sources', '-NOPE')).toThrow(/--tactic-sources: .*"NOPE" is not a tactic source/);
    expect(() => options('--device', '-1')).toThrow(/--device expects a whole number .*got "-1"/);
  });

  it('a forgotten value is said in one line naming the flag, not taken from the next flag', () => {
    for (const [flags, msg] of [
      [['--tactic-sources', '--fp16'], '--tactic-sources needs a value (found --fp16 after it)'],
      [['--tactic-sources', '-h'], '--tactic-sources needs a value (found -h after it)'],
      [['--layer-precisions'], '--layer-precisions needs a value'],
    ] as const) {
      let err: unknown;
      try {
        options(...flags);
      } catch (e) {
        err = e;
      }
      expect(err, flags.join(' ')).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(msg);
    }
  });

  it('after -- everything is a positional, as parseArgs has it', () => {
    expect(() => parseBuildArgs(['-o', 'e.engine', '--', '--tactic-sources', '-CUBLAS'])).toThrow(/build takes one model, got 2/);
  });

  it('check reads build options the same way', () => {
    expect(parseBuildOptionFlags(['--tactic-sources', '-CUBLAS,+CUDNN', '--preview', '-runtimeActivationResize'], 'check', 'engine')).toMatchObject({
      tacticSources: '-CUBLAS,+CUDNN',
      previewFeatures: '-runtimeActivationResize',
    });
  });
});
