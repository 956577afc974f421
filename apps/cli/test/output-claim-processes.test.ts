// Issue 40 item 1: two builds naming one output from different processes (two CLIs, a CLI and a
// `serve`) never run at once. The second is refused with the same words as within one process,
// naming the other build, its program and pid, and it touches nothing of the first's: the
// winner's engine and manifest are the winner's. A holder that was killed (no release ran) does
// not keep the output from the next build, which removes the temp file its killed worker left.
// Real CLIs and serve (bin → dist), real workers on the simulated backend, one state folder for
// all of them as one user's processes share.
import { type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimDir, claimFile, type ClaimHolder } from '../../service/output-claim.js';
import { collect, killLiveClis, parseNdjson, requireBuilt, runCli, spawnCli } from '../../../test/support/cli.js';
import { until } from '../../../test/support/signal-storm.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { killLeftoverServers, startServe, type ServeProcess } from '../../service/http/test/serve-process.js';

const SIM = ['--backend', 'simulated', '--sim-seed', '5'];
// The first build of each pair runs 10 s: long enough that the second, a process started after
// it on a busy machine, still meets it running.
let dir: string;
let model: string;
let env: NodeJS.ProcessEnv;
let claims: string;
const serves: ServeProcess[] = [];

beforeAll(() => {
  requireBuilt();
  dir = fs.realpathSync(tempDir('tbs-claim-procs-'));
  model = writeModel(path.join(dir, 'model.onnx'), { layers: 4 });
  env = { ...process.env, TBS_STATE_DIR: path.join(dir, 'state') };
  claims = claimDir(env);
});
afterEach(async () => {
  await Promise.all(serves.splice(0).map((s) => s.stop('SIGKILL')));
  killLiveClis();
});
afterAll(() => {
  killLeftoverServers();
  fs.rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function outFolder(): string {
  return fs.mkdtempSync(path.join(dir, `o${++n}-`));
}

/** The claim on `out` as a holder wrote it, once there is one. */
async function claimOf(out: string): Promise<ClaimHolder> {
  const file = claimFile(claims, out);
  await until(`the claim on ${out}`, () => fs.existsSync(file), 30_000);
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ClaimHolder;
}

/** A --json build's build.finished. */
function finishedOf(stdout: string): { buildId: string; status: string; error?: string } {
  const ev = parseNdjson(stdout).at(-1) as { type: string; buildId: string; status: string; error?: string };
  expect(ev.type).toBe('build.finished');
  return ev;
}

const sha256 = (f: string) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/** The winner's files are whole and its own: the manifest names its build and the engine's bytes. */
function expectWinnersFiles(out: string, buildId: string): void {
  const m = JSON.parse(fs.readFileSync(`${out}.manifest.json`, 'utf8')) as { buildId: string; engine: { sha256: string } };
  expect(m.buildId).toBe(buildId);
  expect(m.engine.sha256).toBe(sha256(out));
  // Nothing of the loser's beside it (no temp file, no second manifest).
  expect(fs.readdirSync(path.dirname(out)).sort()).toEqual(['model.engine', 'model.engine.layers.json', 'model.engine.manifest.json']);
}

function api(s: ServeProcess, p: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${s.base}${p}`, { ...init, headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) } });
}

async function serveResult(s: ServeProcess, id: string): Promise<{ status: string; error?: string }> {
  const t0 = Date.now();
  for (;;) {
    const rec = (await (await api(s, `/api/builds/${id}`)).json()) as { outcome?: { status: string; error?: string } };
    if (rec.outcome) return rec.outcome;
    if (Date.now() - t0 > 60_000) throw new Error(`serve's build ${id} did not end in 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(undefined) : c.once('exit', r)));

/** The process runs (not gone, not a zombie). */
function running(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A CLI build of `out` that runs until killed, once its claim names its worker. */
async function longHolder(out: string): Promise<{ cli: ChildProcess; holder: ClaimHolder }> {
  const cli = spawnCli(['build', model, '-o', out, ...SIM, '--sim-duration', '60', '--json'], { env });
  await claimOf(out);
  let holder: ClaimHolder | undefined;
  await until('the claim to name the worker', () => {
    holder = JSON.parse(fs.readFileSync(claimFile(claims, out), 'utf8')) as ClaimHolder;
    return holder.workerPid !== undefined;
  });
  return { cli, holder: holder! };
}

describe('one output, two processes', () => {
  it('CLI + CLI: the second is refused naming the first (build, program, pid); the first ends with its own engine and manifest', async () => {
    const out = path.join(outFolder(), 'model.engine');
    const first: ChildProcess = spawnCli(['build', model, '-o', out, ...SIM, '--sim-duration', '10', '--json'], { env });
    const firstDone = collect(first);
    const holder = await claimOf(out);
    expect(holder.pid).toBe(first.pid);
    const second = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
    expect(second.code).toBe(1);
    const refused = finishedOf(second.stdout);
    expect(refused.status).toBe('failed');
    expect(refused.error).toBe(
      `another build (${holder.buildId} of trt-build-studio build, pid ${first.pid}) is writing ${out}: two builds may not write one engine at the same time; wait for it to end or choose another output`,
    );
    const won = await firstDone;
    expect(won.code, won.stderr).toBe(0);
    const f = finishedOf(won.stdout);
    expect(f.status).toBe('succeeded');
    expect(f.buildId).toBe(holder.buildId);
    expectWinnersFiles(out, f.buildId);
    // Released at the end: the next build of that output runs.
    expect(fs.existsSync(claimFile(claims, out))).toBe(false);
    const again = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
  });

  it('serve holds, the CLI is refused; the CLI holds, serve’s build is refused; neither touches the other’s files', async () => {
    const s = await startServe(['--output-dir', path.join(dir, 'serve-engines')], 20_000, env);
    serves.push(s);
    const out = path.join(outFolder(), 'model.engine');
    const res = await api(s, '/api/builds', {
      method: 'POST',
      body: JSON.stringify({ modelPath: model, outputPath: out, options: { backend: 'simulated', simDuration: 10, simSeed: 5 } }),
    });
    expect(res.status).toBe(201);
    const rec = (await res.json()) as { id: string };
    const holder = await claimOf(out);
    expect(holder.pid).toBe(s.proc.pid);
    const cli = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
    expect(cli.code).toBe(1);
    expect(finishedOf(cli.stdout).error).toMatch(new RegExp(`^another build \\(${rec.id} of trt-build-studio serve, pid ${s.proc.pid}\\) is writing `));
    expect((await serveResult(s, rec.id)).status).toBe('succeeded');
    expectWinnersFiles(out, rec.id);

    // The other way round, into a fresh folder.
    const out2 = path.join(outFolder(), 'model.engine');
    const first = spawnCli(['build', model, '-o', out2, ...SIM, '--sim-duration', '10', '--json'], { env });
    const firstDone = collect(first);
    await claimOf(out2);
    const res2 = await api(s, '/api/builds', {
      method: 'POST',
      body: JSON.stringify({ modelPath: model, outputPath: out2, options: { backend: 'simulated', simDuration: 0.2, simSeed: 5 } }),
    });
    const rec2 = (await res2.json()) as { id: string };
    const lost = await serveResult(s, rec2.id);
    expect(lost.status).toBe('failed');
    expect(lost.error).toMatch(new RegExp(`^another build \\(b\\d+-[0-9a-f]+ of trt-build-studio build, pid ${first.pid}\\) is writing `));
    const won = await firstDone;
    expect(won.code, won.stderr).toBe(0);
    expectWinnersFiles(out2, finishedOf(won.stdout).buildId);
    // serve keeps running after refusing.
    expect((await api(s, '/api/builds')).status).toBe(200);
  });

  it('a killed holder (CLI and worker SIGKILLed, its claim left behind) does not block the next build, which removes the temp file it left', async () => {
    const out = path.join(outFolder(), 'model.engine');
    const { cli, holder } = await longHolder(out);
    // The worker's temp file as the TensorRT adapter holds it for a whole build (the simulated
    // backend writes its engine only at the end): the CLI's watch records it in the claim.
    const temp = `${out}.tmp-${holder.workerPid}-0`;
    fs.writeFileSync(temp, 'half an engine');
    const st = fs.statSync(temp);
    await until('the claim to record the temp file', () =>
      ((JSON.parse(fs.readFileSync(claimFile(claims, out), 'utf8')) as ClaimHolder).temps ?? []).includes(`${st.dev}:${st.ino}`),
    );
    process.kill(holder.workerPid!, 'SIGKILL');
    cli.kill('SIGKILL');
    await exited(cli);
    await until('the worker to be gone', () => !running(holder.workerPid!));
    expect(fs.existsSync(claimFile(claims, out))).toBe(true); // no release ran: only its dead holder tells it is stale
    expect(fs.existsSync(temp)).toBe(true); // nor any clean-up
    const next = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
    expect(next.code, next.stdout + next.stderr).toBe(0);
    // The engine and its sidecars alone: the dead worker's temp file is gone.
    expectWinnersFiles(out, finishedOf(next.stdout).buildId);
  });

  it('a killed CLI whose worker is still there holds the output until the worker is gone', async () => {
    const out = path.join(outFolder(), 'model.engine');
    const { cli, holder } = await longHolder(out);
    // Stopped, the orphaned worker cannot wind down: it stands for one that is still cancelling.
    process.kill(holder.workerPid!, 'SIGSTOP');
    cli.kill('SIGKILL');
    await exited(cli);
    try {
      const during = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
      expect(during.code).toBe(1);
      expect(finishedOf(during.stdout).error).toMatch(new RegExp(`^another build \\(${holder.buildId} of trt-build-studio build, pid ${cli.pid}\\) is writing `));
    } finally {
      process.kill(holder.workerPid!, 'SIGKILL');
    }
    await until('the worker to be gone', () => !running(holder.workerPid!));
    const next = await runCli(['build', model, '-o', out, ...SIM, '--sim-duration', '0.2', '--json'], { env });
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expectWinnersFiles(out, finishedOf(next.stdout).buildId);
  });
});
