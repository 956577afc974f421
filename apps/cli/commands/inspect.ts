// `inspect <model> [--json]`: the model summary the build uses (inputs, shapes, ops, sizes).
import { parseArgs } from 'node:util';
import { inspectModel } from '../../service/model/model-reader.js';
import { displayText } from '../../shared/display-text.js';
import type { TensorInfo } from '../../shared/protocol.js';
import { formatBytes } from '../../shared/format.js';
import { formatShape } from '../labels.js';
import { endQuietlyWhenStdoutCloses } from '../closed-stdout.js';
import { UsageError } from '../../shared/usage-error.js';

export const INSPECT_HELP = `Usage: trt-build-studio inspect <model.onnx> [--json]

Prints the model's summary: IR version, opsets, producer, inputs and outputs with shapes
(symbolic dimensions by name), node count, operator histogram, weight bytes (initializers and
Constant nodes), dynamic inputs, probable shape-tensor inputs. Only the model's structure is
read, never its weights: time and memory hardly depend on the model's size.
Names from the model are printed with control characters and bidi overrides escaped (\\x1b,
\\u202e); --json output is exact JSON.

Options:
  --json      print the summary as one JSON object
  -h, --help
`;

export async function runInspect(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  endQuietlyWhenStdoutCloses();
  if (values.help) {
    process.stdout.write(INSPECT_HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('inspect needs exactly one model: trt-build-studio inspect <model.onnx>');
  const s = await inspectModel(positionals[0]);
  if (values.json) {
    process.stdout.write(JSON.stringify(s, null, 2) + '\n');
    return 0;
  }
  // Every string below came from the model file: shown escaped, never acted on by the terminal.
  const t = displayText;
  const w = (l = '') => process.stdout.write(l + '\n');
  w(`${t(s.fileName)}  (${formatBytes(s.fileBytes)})`);
  w(`  IR version ${s.irVersion}; opsets ${s.opsetImports.map((o) => `${t(o.domain)} ${o.version}`).join(', ')}`);
  w(`  producer ${t(s.producer.name) || '(unknown)'} ${t(s.producer.version)}; graph "${t(s.graphName)}"`);
  const tensor = (i: TensorInfo) => `  ${t(i.name)}  ${t(i.elemType)} ${t(formatShape(i.shape, i.rankUnknown))}`;
  w('Inputs:');
  for (const i of s.inputs) w(tensor(i));
  w('Outputs:');
  for (const o of s.outputs) w(tensor(o));
  if (s.dynamicInputs.length) {
    w('Dynamic inputs (without --shapes, each dynamic dimension is built as 1, as trtexec does):');
    for (const d of s.dynamicInputs) w(`  ${t(d.name)}: ${t(d.dims.join(', '))}`);
  }
  if (s.shapeTensorInputs?.length) {
    w('Probable shape-tensor inputs (they take values, not dims; TensorRT decides):');
    w(`  ${s.shapeTensorInputs.map(t).join(', ')}`);
  }
  w(`Nodes: ${s.nodeCount}`);
  const ops = Object.entries(s.opHistogram).sort((a, b) => b[1] - a[1]);
  for (const [op, n] of ops) w(`  ${t(op).padEnd(24)} ${n}`);
  if (s.pluginOps?.length) {
    w('Custom-domain operators (TensorRT builds them only with a plugin that implements each):');
    w(`  ${s.pluginOps.map(t).join(', ')}`);
  }
  // initializerBytes counts initializers and Constant-node tensors alike: both are weights.
  w(`Weights: ${formatBytes(s.initializerBytes)} (initializers and Constant nodes)`);
  if (s.externalData.files.length) w(`  external data: ${s.externalData.files.map(t).join(', ')} (${formatBytes(s.externalData.bytes)})`);
  if (s.notes?.length) {
    w('Notes:');
    for (const n of s.notes) w(`  ${t(n)}`);
  }
  return 0;
}
