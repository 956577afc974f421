// `build --verbose` / `trtexec --verbose` as users run them: the backend's VERBOSE lines reach
// plain output and --json only when asked. (The volume test, a memory bound, runs alone with
// `npm run test:memory`: cli-verbose-memory.test.ts.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BuildEvent } from '../../shared/protocol.js';
import { killLiveClis, parseNdjson, runCli } from '../../../test/support/cli.js';
import { assertEventStream } from '../../../test/support/event-invariants.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

const SIM = ['--backend', 'simulated', '--sim-duration', '0.3', '--sim-seed', '5'];

let dir: string;
let model: string;

beforeAll(() => {
  dir = tempDir('tbs-cli-verbose-');
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 8 });
});
afterEach(() => killLiveClis());
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const verboseEvents = (stdout: string) => (parseNdjson(stdout) as BuildEvent[]).filter((e) => e.type === 'log' && e.severity === 'verbose');

describe('--verbose', () => {
  it('plain output prints the verbose lines only with --verbose', async () => {
    const quiet = await runCli(['build', model, '-o', path.join(dir, 'q.engine'), ...SIM]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toMatch(/ verbose: /);
    const loud = await runCli(['build', model, '-o', path.join(dir, 'l.engine'), ...SIM, '--verbose']);
    expect(loud.code).toBe(0);
    expect(loud.stderr).toBe('');
    const lines = loud.stdout.split('\n').filter((l) => / verbose: /.test(l));
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.some((l) => / verbose: Autotuning op /.test(l))).toBe(true);
    expect(lines.some((l) => / verbose: \[simulated\] /.test(l))).toBe(true);
  });

  it('--json carries verbose log events with --verbose, none without', async () => {
    const quiet = await runCli(['build', model, '-o', path.join(dir, 'qj.engine'), ...SIM, '--json']);
    expect(quiet.code).toBe(0);
    expect(verboseEvents(quiet.stdout)).toEqual([]);
    const loud = await runCli(['build', model, '-o', path.join(dir, 'lj.engine'), ...SIM, '--json', '--verbose']);
    expect(loud.code).toBe(0);
    const events = assertEventStream(parseNdjson(loud.stdout));
    const started = events.find((e) => e.type === 'build.started') as Extract<BuildEvent, { type: 'build.started' }>;
    expect(started.options?.verboseLog).toBe(true);
    expect(verboseEvents(loud.stdout).length).toBeGreaterThan(10);
  });

  it('trtexec --verbose prints the verbose lines and draws no warning', async () => {
    const r = await runCli(['trtexec', `--onnx=${model}`, `--saveEngine=${path.join(dir, 't.engine')}`, '--backend=simulated', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/ verbose: \[simulated\] /);
  });
});
