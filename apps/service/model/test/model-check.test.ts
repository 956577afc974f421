// The model checker through the model reader (the one place every surface reads models): each
// class of invalid model is a bad_model error naming the node or tensor; valid variations
// (custom-domain operators, old exporters' initializers among the inputs, If bodies using outer
// names, packed and typed data, external data) are not refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { onnx } from 'onnx-proto';
import { ACCEPTED_MODELS, INVALID_MODELS, writeInvalidModel } from '../../../../test/support/invalid-models.js';
import { expectedSummary, tempDir, writeModel } from '../../../../test/support/onnx-gen.js';
import { ServiceError } from '../../api.js';
import { readModel } from '../model-reader.js';
import opsData from '../onnx-ops.json';

const dir = tempDir('tbs-model-check-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('invalid models are refused before any build, naming what is wrong', () => {
  for (const c of INVALID_MODELS) {
    it(c.name, async () => {
      const p = writeInvalidModel(dir, c);
      const e = await readModel(p).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e, `${c.name} was accepted`).toBeInstanceOf(ServiceError);
      expect((e as ServiceError).code).toBe('bad_model');
      expect((e as ServiceError).message).toMatch(c.says);
      const m = (e as ServiceError).message;
      // The checker's refusals: a short first line (what, where, how many), then one problem a line.
      if (m.startsWith(`${p} is not a valid ONNX model for TensorRT: `)) {
        const [head, ...list] = m.split('\n');
        const n = Number(/: (\d+) problems?( \(the first \d+ listed\))?$/.exec(head)?.[1]);
        expect(n, head).toBeGreaterThan(0);
        expect(list.length).toBe(Math.min(n, 10) + (n > 10 ? 1 : 0));
        list.slice(0, Math.min(n, 10)).forEach((l, i) => expect(l.startsWith(`  ${i + 1}. `), l).toBe(true));
      } else expect(m.startsWith(`${p} is not a valid ONNX model: `) || m.startsWith(`${p}: `), m).toBe(true);
    });
  }

  it('several problems are listed together, numbered, and capped', async () => {
    const p = writeModel(path.join(dir, 'many.onnx'), {
      layers: 1,
      mutate: (m) => {
        for (const n of m.graph!.node!) n.input = n.input!.map((x) => `${x}_missing`);
      },
    });
    const e = (await readModel(p).catch((err: unknown) => err)) as ServiceError;
    const [head, ...list] = e.message.split('\n');
    const n = Number(/ is not a valid ONNX model for TensorRT: (\d+) problems \(the first 10 listed\)$/.exec(head)?.[1]);
    expect(n, head).toBeGreaterThan(10);
    expect(head.length).toBeLessThan(p.length + 80);
    expect(list[0]).toMatch(/^ {2}1\. node "conv_0" #0 \(Conv\) reads "input_missing"/);
    expect(list[9]).toMatch(/^ {2}10\. /);
    expect(list[10]).toBe(`  … and ${n - 10} more problems`);
    expect(list).toHaveLength(11);
  });
  it('a line break in a name stays inside its problem line (written as \\n)', async () => {
    const p = writeModel(path.join(dir, 'newline-name.onnx'), {
      layers: 1,
      mutate: (m) => {
        const n = m.graph!.node![0];
        n.input = [`in\nput_missing`, ...n.input!.slice(1)];
      },
    });
    const e = (await readModel(p).catch((err: unknown) => err)) as ServiceError;
    const [head, ...list] = e.message.split('\n');
    expect(head).toMatch(/: 1 problem$/);
    expect(list).toHaveLength(1);
    expect(list[0]).toContain('reads "in\\nput_missing"');
  });
});

describe('valid models pass', () => {
  it('custom-domain operators are let through and listed as needing a plugin', async () => {
    const p = writeModel(path.join(dir, 'custom.onnx'), {
      layers: 1,
      mutate: (m) => {
        const relu = m.graph!.node!.find((n) => n.opType === 'Relu')!;
        Object.assign(relu, { domain: 'com.example', opType: 'FancyRelu' });
        m.opsetImport!.push({ domain: 'com.example', version: 1 });
      },
    });
    const { summary } = await readModel(p);
    expect(summary.pluginOps).toEqual(['com.example.FancyRelu']);
    expect(summary.opHistogram['com.example.FancyRelu']).toBe(1);
  });

  it('a model with no custom operators has no pluginOps', async () => {
    const { summary } = await readModel(writeModel(path.join(dir, 'plain.onnx'), { layers: 2 }));
    expect(summary.pluginOps).toBeUndefined();
  });

  it('If bodies reading the outer graph, Constant nodes, float_data and external data', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'ext-'));
    const p = writeModel(path.join(sub, 'm.onnx'), { layers: 2, subgraphs: { bytes: 64 }, constant: { bytes: 64, as: 'float_data' }, externalData: 'w.bin' });
    await expect(readModel(p, { requireExternalData: true })).resolves.toBeDefined();
  });

  it('every opset ONNX defines, with an operator that existed in opset 1', async () => {
    const max = opsData.domains['ai.onnx'].maxOpset;
    for (const opset of [1, 7, 13, max]) {
      await expect(readModel(writeModel(path.join(dir, `opset-${opset}.onnx`), { layers: 1, opset })), `opset ${opset}`).resolves.toBeDefined();
    }
  });

  it('4-bit data packed two a byte in raw_data and int32_data', async () => {
    for (const [field, data] of [
      ['rawData', Buffer.alloc(4)],
      ['int32Data', [0, 0, 0, 0]],
    ] as const) {
      const p = writeModel(path.join(dir, `int4-${field}.onnx`), {
        layers: 1,
        mutate: (m) => {
          // 7 int4 elements: 4 bytes (or int32_data entries), the last half empty.
          m.graph!.initializer!.push({ name: 'q', dims: [7], dataType: 22, [field]: data });
        },
      });
      await expect(readModel(p), field).resolves.toBeDefined();
    }
  });
});

describe("what onnx.checker refuses but TensorRT's parser imports is let through, with a note", () => {
  for (const c of ACCEPTED_MODELS) {
    it(c.name, async () => {
      const p = writeInvalidModel(dir, { name: c.name, spec: c.spec, says: /./ });
      const { summary, notes } = await readModel(p);
      expect(notes).toHaveLength(c.notes.length);
      c.notes.forEach((n, i) => expect(notes[i]).toMatch(n));
      expect(summary.pluginOps).toEqual(c.pluginOps);
    });
  }
});

/** A model whose If node holds one body, built by hand from `body` (its nodes, reading the outer "input"). */
function withIfBody(name: string, body: onnx.INodeProto[], bodyOutput: string): string {
  return writeModel(path.join(dir, name), {
    layers: 1,
    mutate: (m) => {
      const g = m.graph!;
      g.node!.push({ opType: 'Constant', name: 'cond', output: ['c'], attribute: [{ name: 'value', type: 4, t: { dims: [], dataType: 9, rawData: Buffer.from([1]) } }] });
      const branch = (bn: string): onnx.IGraphProto => ({ name: bn, node: body, output: [{ name: bodyOutput }] });
      g.node!.push({
        opType: 'If',
        name: 'the_if',
        input: ['c'],
        output: ['if_out'],
        attribute: [
          { name: 'then_branch', type: 5, g: branch('t') },
          { name: 'else_branch', type: 5, g: branch('e') },
        ],
      });
    },
  });
}

describe("graph order as TensorRT's parser sorts it", () => {
  it("Cast nodes appended at the end (a float16 converter's way): accepted, layers in sorted order, a note says the nodes were reordered", async () => {
    const spec = { layers: 2, castsAtEnd: true };
    const { summary, layers, notes } = await readModel(writeModel(path.join(dir, 'casts.onnx'), spec));
    const want = expectedSummary(spec);
    expect(layers.map((l) => l.name)).toEqual(want.layerNames);
    expect(layers[0]).toEqual({ name: want.layerNames[0], op: 'Cast' });
    expect(layers.at(-1)?.op).toBe('Cast');
    expect(summary.opHistogram).toEqual(want.opHistogram);
    expect(summary.nodeCount).toBe(want.nodeCount);
    expect(notes).toEqual([
      expect.stringMatching(
        /^the nodes are not in topological order \(1 node reads the output of a later node; first: node "conv_0" #0 \(Conv\) reads "input_cast", which node "cast_\d+" #\d+ \(Cast\) after it produces\); TensorRT's ONNX parser sorts them itself/,
      ),
    ]);
  });

  it('a sorted model has no notes and keeps its file order', async () => {
    const spec = { layers: 3 };
    const { layers, notes } = await readModel(writeModel(path.join(dir, 'sorted.onnx'), spec));
    expect(notes).toEqual([]);
    expect(layers.map((l) => l.name)).toEqual(expectedSummary(spec).layerNames);
  });

  it('a body out of order is sorted like the main graph (a note), a body reading the outer graph is ordered after its producer', async () => {
    const p = withIfBody(
      'body-order.onnx',
      [
        { opType: 'Identity', name: 'second', input: ['b1'], output: ['b2'] },
        { opType: 'Relu', name: 'first', input: ['probs'], output: ['b1'] },
      ],
      'b2',
    );
    const { notes } = await readModel(p);
    expect(notes).toHaveLength(2); // each branch
    expect(notes[0]).toMatch(
      /^the nodes in a subgraph of node "the_if" #\d+ \(If\) are not in topological order \(1 node reads the output of a later node; first: node "second" #0 in a subgraph of node "the_if"/,
    );
  });

  it('a cycle inside a body is refused, naming its nodes', async () => {
    const p = withIfBody(
      'body-cycle.onnx',
      [
        { opType: 'Add', name: 'a', input: ['probs', 'y'], output: ['x'] },
        { opType: 'Relu', name: 'b', input: ['x'], output: ['y'] },
      ],
      'y',
    );
    const e = (await readModel(p).catch((err: unknown) => err)) as ServiceError;
    expect(e).toBeInstanceOf(ServiceError);
    expect(e.message).toMatch(
      /the graph in a subgraph of node "the_if" #\d+ \(If\) has a cycle through 2 nodes: node "a" #0 in a subgraph of .* reads "y" from node "b" #1 in a subgraph of .*, node "b" #1 .* reads "x" from node "a" #0/,
    );
  });

  it('a body reading a name no enclosing graph has is refused at its node', async () => {
    const p = withIfBody('body-ghost.onnx', [{ opType: 'Relu', name: 'r', input: ['ghost'], output: ['y'] }], 'y');
    const e = (await readModel(p).catch((err: unknown) => err)) as ServiceError;
    expect(e.message).toMatch(/a subgraph of node "the_if" #\d+ \(If\) reads "ghost", which no node produces/);
  });

  it("a node whose body reads an output of a later node is ordered after that node (the parser's outer-scope dependencies)", async () => {
    const p = withIfBody('body-outer.onnx', [{ opType: 'Relu', name: 'r', input: ['late'], output: ['y'] }], 'y');
    const moved = p.replace('.onnx', '2.onnx');
    writeModel(moved, {
      layers: 1,
      mutate: (m) => {
        const g = m.graph!;
        g.node!.push({ opType: 'Constant', name: 'cond', output: ['c'], attribute: [{ name: 'value', type: 4, t: { dims: [], dataType: 9, rawData: Buffer.from([1]) } }] });
        const branch = (bn: string): onnx.IGraphProto => ({ name: bn, node: [{ opType: 'Relu', name: 'r', input: ['late'], output: ['y'] }], output: [{ name: 'y' }] });
        g.node!.push({
          opType: 'If',
          name: 'the_if',
          input: ['c'],
          output: ['if_out'],
          attribute: [
            { name: 'then_branch', type: 5, g: branch('t') },
            { name: 'else_branch', type: 5, g: branch('e') },
          ],
        });
        g.node!.push({ opType: 'Identity', name: 'late_node', input: ['probs'], output: ['late'] });
      },
    });
    const { layers, notes } = await readModel(moved);
    expect(layers.findIndex((l) => l.name === 'late_node')).toBeLessThan(layers.findIndex((l) => l.name === 'the_if'));
    expect(notes[0]).toMatch(/reads "late", which node "late_node"/);
  });
});

describe("model-local functions, expanded as TensorRT's parser inlines them", () => {
  it("a PyTorch-dynamo-style aten_gelu: not a plugin op; layers and histogram hold its body's nodes; a note names it", async () => {
    const spec = { layers: 2, localFunction: true };
    const { summary, layers, notes } = await readModel(writeModel(path.join(dir, 'gelu.onnx'), spec));
    const want = expectedSummary(spec);
    expect(summary.pluginOps).toBeUndefined();
    expect(summary.opHistogram).toEqual(want.opHistogram);
    expect(summary.opHistogram['pkg.onnxscript.torch_lib.aten_gelu']).toBeUndefined();
    expect(summary.opHistogram.Erf).toBe(2);
    expect(layers.map((l) => l.name)).toEqual(want.layerNames);
    expect(summary.nodeCount).toBe(want.nodeCount);
    expect(summary.initializerBytes).toBe(want.initializerBytes);
    expect(notes).toEqual(["model-local functions expanded into their nodes, as TensorRT's ONNX parser imports them: pkg.onnxscript.torch_lib.aten_gelu (2 calls)"]);
  });

  const fn = (mutate: (f: onnx.IFunctionProto, m: onnx.IModelProto) => void) => ({
    layers: 1,
    localFunction: true,
    mutate: (m: onnx.IModelProto) => {
      m.functions = m.functions!.map((f) => structuredClone(f));
      mutate(m.functions[0], m);
    },
  });
  const refused = async (name: string, spec: ReturnType<typeof fn>) => (await readModel(writeModel(path.join(dir, name), spec)).catch((e: unknown) => e)) as ServiceError;

  it('a call with the wrong number of inputs is refused, as the parser refuses it', async () => {
    const e = await refused(
      'fn-arity.onnx',
      fn((f) => void f.input!.push('extra')),
    );
    expect(e.message).toMatch(/node "aten_gelu_1" #1 \(aten_gelu\) calls local function "aten_gelu" with 1 input, but it declares 2: TensorRT's parser refuses the call/);
  });

  it("a function whose nodes are out of order is refused (the parser imports a function's nodes in file order)", async () => {
    const e = await refused(
      'fn-order.onnx',
      fn((f) => void f.node!.reverse()),
    );
    expect(e.message).toMatch(
      /local function "pkg\.onnxscript\.torch_lib\.aten_gelu": node "n_mul_1" #0 \(Mul\) reads "prod" before its node #2 produces it; TensorRT's parser imports a function's nodes in file order/,
    );
  });

  it('a function that calls itself is refused', async () => {
    const e = await refused(
      'fn-rec.onnx',
      fn((f) => void f.node!.push({ opType: 'aten_gelu', domain: 'pkg.onnxscript.torch_lib', name: 'again', input: ['return_val'], output: ['again_out'] })),
    );
    expect(e.message).toMatch(/local function "pkg\.onnxscript\.torch_lib\.aten_gelu" calls itself \(aten_gelu → aten_gelu\)/);
  });

  it('a custom-domain op that names no function is still a plugin op', async () => {
    const { summary } = await readModel(
      writeModel(
        path.join(dir, 'fn-other.onnx'),
        fn((f) => void (f.name = 'aten_other')),
      ),
    );
    expect(summary.pluginOps).toEqual(['pkg.onnxscript.torch_lib.aten_gelu']);
  });
});
