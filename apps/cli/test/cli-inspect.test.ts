// `inspect` through the built CLI: hostile text from the model, out-of-range numbers, escaping
// external data, and a lean start-up (the command loads only what it needs).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, collect, runCli } from '../../../test/support/cli.js';
import { tempDir, writeModel } from '../../../test/support/onnx-gen.js';

let dir: string;
beforeAll(() => {
  dir = tempDir('tbs-cli-inspect-');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('inspect output carries no control characters from the model', () => {
  const evilInput = 'in\x1b[2J\x1b]0;pwned\x07put';
  const evilShape = 'ba\rtch';
  const evilOp = 'Evil\u202eop';
  let p: string;
  beforeAll(() => {
    p = writeModel(path.join(dir, 'evil.onnx'), {
      graphName: 'g\x9b31m',
      producer: { name: 'tool\u2066x\u2069', version: '1\x7f' },
      inputs: [{ name: evilInput, shape: [evilShape, 3, 8, 8] }],
      extraNodes: [{ op: evilOp, inputs: [evilInput], outputs: ['e'] }],
      // In a custom domain: ai.onnx has no such operator, and the model checker refuses unknown ones there.
      mutate: (m) => {
        for (const n of m.graph!.node!) if (n.opType === evilOp) n.domain = 'com.evil';
      },
    });
  });

  it('text output escapes them visibly', async () => {
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(UNSAFE);
    expect(r.stdout).toContain('in\\x1b[2J\\x1b]0;pwned\\x07put');
    expect(r.stdout).toContain('[ba\\rtch, 3, 8, 8]');
    expect(r.stdout).toContain('Evil\\u202eop');
    expect(r.stdout).toContain('graph "g\\x9b31m"');
    expect(r.stdout).toContain('producer tool\\u2066x\\u2069 1\\x7f');
  });

  it('--json keeps the exact strings (JSON escaping only)', async () => {
    const r = await runCli(['inspect', p, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.inputs[0].name).toBe(evilInput);
    expect(s.inputs[0].shape[0]).toBe(evilShape);
    expect(s.opHistogram[`com.evil.${evilOp}`]).toBe(1);
    expect(s.pluginOps).toEqual([`com.evil.${evilOp}`]);
    expect(s.graphName).toBe('g\x9b31m');
  });

  it('error messages quoting a model name are escaped too', async () => {
    const q = writeModel(path.join(dir, 'evil-dim.onnx'), { inputs: [{ name: 'x\x1b[31m', shape: [1, 2 ** 40] }] });
    const r = await runCli(['inspect', q]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('input "x\\x1b[31m" has an absurd dimension');
    expect(r.stderr).not.toContain('\x1b');
  });
});

describe('inspect refuses bad numbers and escaping data with exit 2', () => {
  it('opset 2^63-1 is a usage-class error naming the field and the exact value', async () => {
    const p = writeModel(path.join(dir, 'opset.onnx'), { opset: '9223372036854775807' });
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('opset_import "ai.onnx" version is 9223372036854775807');
    expect(r.stdout).toBe('');
  });

  it('a 20-digit external data length', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'len-'));
    const p = writeModel(path.join(sub, 'm.onnx'), { layers: 1, externalData: 'w.bin', externalLength: '99999999999999999999' });
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`external data length is 99999999999999999999`);
  });

  it('external data that is a symlink out of the model folder', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'link-'));
    const p = writeModel(path.join(sub, 'm.onnx'), { layers: 1, externalData: 'w.bin' });
    fs.rmSync(path.join(sub, 'w.bin'));
    fs.symlinkSync('/etc/passwd', path.join(sub, 'w.bin'));
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/initializer "conv0\.weight" has an invalid external data location "w\.bin": it resolves \(through a symbolic link\) to \/etc\/passwd/);
  });

  it('a text file is "not an ONNX model"', async () => {
    const p = path.join(dir, 'notes.onnx');
    fs.writeFileSync(p, '2023 notes: this model is the good one\n');
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not an ONNX model: it looks like a text file/);
  });
});

describe('inspect start-up', () => {
  it('loads no service, HTTP, MCP or zod code', async () => {
    const p = writeModel(path.join(dir, 'lean.onnx'), { layers: 2 });
    const trace = path.join(dir, 'trace.js');
    fs.writeFileSync(
      trace,
      `const M = require('module'); const seen = [];
       const orig = M._load;
       M._load = function (r, parent, isMain) { try { seen.push(M._resolveFilename(r, parent, isMain)); } catch {} return orig.apply(this, arguments); };
       process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(path.join(dir, 'loaded.json'))}, JSON.stringify(seen)));`,
    );
    const r = await collect(spawn(process.execPath, ['-r', trace, CLI_BIN, 'inspect', p], { stdio: ['ignore', 'pipe', 'pipe'] }));
    expect(r.code).toBe(0);
    const loaded: string[] = JSON.parse(fs.readFileSync(path.join(dir, 'loaded.json'), 'utf8'));
    expect(loaded.some((f) => f.includes('model-reader'))).toBe(true);
    const heavy = loaded.filter((f) => /node_modules[\\/](zod|@modelcontextprotocol)|apps[\\/](service[\\/](http|build-service)|mcp|worker)[\\/]?|[\\/]protocol\.js$/.test(f));
    expect(heavy).toEqual([]);
    expect(loaded).not.toContain('http');
  });
});

describe('a reader that goes away', () => {
  it('`inspect | head -1`: the command ends quietly with success, no stack trace', async () => {
    const p = writeModel(path.join(dir, 'wide.onnx'), { layers: 200 });
    // The pipe is closed before the command writes: every write meets EPIPE.
    const child = spawn(process.execPath, [CLI_BIN, 'inspect', p], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(stderr).not.toMatch(/EPIPE|Error|at /);
    expect(code).toBe(0);
  });
});

describe('shapes as declared', () => {
  it('prints "(no shape)" for a tensor whose shape the file leaves out, "[]" for a scalar', async () => {
    const p = writeModel(path.join(dir, 'noshape.onnx'), {
      inputs: [
        { name: 'free', shape: null },
        { name: 'scalar', shape: [] },
      ],
    });
    const r = await runCli(['inspect', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  free  float32 (no shape)\n');
    expect(r.stdout).toContain('  scalar  float32 []\n');
  });
});
