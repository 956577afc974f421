// `lsp --plugin-dir` (issue 34 item 3): an editor names plugin libraries only from inside the
// operator's folders; anything else is InvalidParams (the service's bad_input) and no build
// starts. The real server process and simulated builds.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ErrorCodes, ResponseError } from 'vscode-languageserver-protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { SERVER_ENTRY, startLsp, type LspTestClient } from './harness.js';

let dir: string;
let trusted: string;
let custom: string;
let lsp: LspTestClient;

beforeAll(async () => {
  dir = fs.realpathSync(tempDir('tbs-lsp-plugins-'));
  trusted = path.join(dir, 'plugins');
  fs.mkdirSync(trusted);
  fs.writeFileSync(path.join(trusted, 'libmy_plugin.so'), 'stand-in plugin library');
  fs.writeFileSync(path.join(dir, 'libevil.so'), 'not the operator’s');
  custom = writeModel(path.join(dir, 'custom.onnx'), { layers: 1, extraNodes: [{ op: 'MyCustomOp', inputs: ['probs'], outputs: ['custom_out'], domain: 'com.example' }] });
  lsp = await startLsp(['--plugin-dir', trusted, '--output-dir', path.join(dir, 'engines')]);
});

afterAll(async () => {
  if (lsp) {
    await lsp.shutdown().catch(() => undefined);
    await lsp.kill();
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const sim = (extra: Record<string, unknown>) => ({ backend: 'simulated', simDuration: 0.3, simSeed: 5, ...extra });

describe('lsp --plugin-dir', () => {
  it('refuses a library outside the folders with InvalidParams naming the option and the folders; one inside builds', async () => {
    const outside = path.join(dir, 'libevil.so');
    const err = await lsp.execute('trtBuildStudio.build', [{ modelPath: custom, options: sim({ staticPlugins: [`${trusted}/../libevil.so`] }) }]).then(
      () => undefined,
      (e: unknown) => e as ResponseError<unknown>,
    );
    expect(err).toBeInstanceOf(ResponseError);
    expect(err!.code).toBe(ErrorCodes.InvalidParams);
    expect(err!.message).toContain(`staticPlugins[0]: ${outside} is not inside a plugin folder of this service (allowed: ${trusted})`);
    expect(fs.existsSync(path.join(dir, 'engines')) ? fs.readdirSync(path.join(dir, 'engines')) : []).toEqual([]);

    const ok = await lsp.execute('trtBuildStudio.build', [
      { modelPath: custom, outputPath: path.join(dir, 'ok.engine'), options: sim({ staticPlugins: [path.join(trusted, 'libmy_plugin.so')] }) },
    ]);
    expect(ok.status).toBe('succeeded');
  });

  it('refuses to start with a --plugin-dir that does not exist', () => {
    const r = spawnSync(process.execPath, [SERVER_ENTRY, '--stdio', '--plugin-dir', path.join(dir, 'nope')], { encoding: 'utf8', input: '', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`trt-build-studio lsp: --plugin-dir ${path.join(dir, 'nope')}: no such folder`);
  });
});
