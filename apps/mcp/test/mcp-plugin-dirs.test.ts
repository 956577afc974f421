// `mcp --plugin-dir` (issue 34 item 3): an agent names plugin libraries only from inside the
// operator's folders; anything else is invalid arguments (-32602) and no build starts. The real
// server process and simulated builds (their plugin handling stands for TensorRT's dlopen, and the
// manifest records each loaded library's sha256).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';
import { isAlive, startServer, waitFor, type RunningServer } from './harness.js';

let dir: string;
let trusted: string;
let lib: string;
let custom: string;
let srv: RunningServer;

beforeAll(async () => {
  dir = fs.realpathSync(tempDir('tbs-mcp-plugins-'));
  trusted = path.join(dir, 'plugins');
  fs.mkdirSync(trusted);
  lib = path.join(trusted, 'libmy_plugin.so');
  fs.writeFileSync(lib, 'stand-in plugin library');
  fs.writeFileSync(path.join(dir, 'libevil.so'), 'not the operator’s');
  fs.symlinkSync(path.join(dir, 'libevil.so'), path.join(trusted, 'libsneaky.so'));
  custom = writeModel(path.join(dir, 'custom.onnx'), { layers: 1, extraNodes: [{ op: 'MyCustomOp', inputs: ['probs'], outputs: ['custom_out'], domain: 'com.example' }] });
  srv = await startServer(['--plugin-dir', trusted, '--output-dir', path.join(dir, 'engines')]);
});

afterAll(async () => {
  await srv?.close();
  if (srv) await waitFor('the server to exit', () => !isAlive(srv.pid) || undefined, 10_000);
  fs.rmSync(dir, { recursive: true, force: true });
});

const sim = (extra: Record<string, unknown>) => ({ backend: 'simulated', simDuration: 0.3, simSeed: 3, ...extra });

async function invalid(s: RunningServer, name: string, args: unknown): Promise<string> {
  const e = await s.client.request({ method: 'tools/call', params: { name, arguments: args } } as never, CallToolResultSchema).then(
    () => undefined,
    (err: McpError) => err,
  );
  expect(e, `${name} ${JSON.stringify(args)} should be -32602`).toBeInstanceOf(McpError);
  expect(e!.code).toBe(-32602);
  return e!.message;
}

describe('mcp --plugin-dir', () => {
  it('refuses a library outside the folders (also through a symlink or ..) as invalid arguments; no build starts', async () => {
    const outside = path.join(dir, 'libevil.so');
    expect(await invalid(srv, 'build_engine', { modelPath: custom, options: sim({ staticPlugins: [outside] }) })).toContain(
      `staticPlugins[0]: ${outside} is not inside a plugin folder of this service (allowed: ${trusted})`,
    );
    expect(await invalid(srv, 'start_build', { modelPath: custom, options: sim({ dynamicPlugins: [path.join(trusted, 'libsneaky.so')] }) })).toContain(
      `resolves to ${outside}, outside the plugin folders`,
    );
    expect(await invalid(srv, 'start_build', { modelPath: custom, options: sim({ pluginsToSerialize: [`${trusted}/../libevil.so`] }) })).toContain('is not inside a plugin folder');
    const r = await srv.client.callTool({ name: 'list_builds', arguments: {} });
    expect((r.structuredContent as { builds: unknown[] }).builds).toEqual([]);
  });

  it('builds with a library inside, which the manifest records', async () => {
    const out = path.join(dir, 'with-plugin.engine');
    const r = await srv.client.callTool({ name: 'build_engine', arguments: { modelPath: custom, outputPath: out, options: sim({ dynamicPlugins: [lib] }) } });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const manifest = JSON.parse(fs.readFileSync(`${out}.manifest.json`, 'utf8')) as { pluginLibraries: Array<{ path: string; sha256: string }> };
    expect(manifest.pluginLibraries).toEqual([{ path: lib, sha256: crypto.createHash('sha256').update(fs.readFileSync(lib)).digest('hex') }]);
  });

  it('without --plugin-dir every plugin library is refused', async () => {
    const bare = await startServer([]);
    try {
      expect(await invalid(bare, 'start_build', { modelPath: custom, options: sim({ staticPlugins: [lib] }) })).toContain(
        'staticPlugins[0]: this service loads no plugin libraries: start it with --plugin-dir <folder>',
      );
    } finally {
      await bare.close();
    }
  });
});
