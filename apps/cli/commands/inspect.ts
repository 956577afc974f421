// `inspect <model> [--json]`: the model summary the build uses (inputs, shapes, ops, sizes).
import { parseArgs } from 'node:util';
import { inspectModel } from '../../service/model-reader.js';
import { formatBytes, formatShape } from '../format.js';
import { UsageError } from '../usage-error.js';

export const INSPECT_HELP = `Usage: trt-build-studio inspect <model.onnx> [--json]

Prints the model's summary: IR version, opsets, producer, inputs and outputs with shapes
(symbolic dimensions by name), node count, operator histogram, weight bytes, dynamic inputs.

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
  const w = (l = '') => process.stdout.write(l + '\n');
  w(`${s.fileName}  (${formatBytes(s.fileBytes)})`);
  w(`  IR version ${s.irVersion}; opsets ${s.opsetImports.map((o) => `${o.domain} ${o.version}`).join(', ')}`);
  w(`  producer ${s.producer.name || '(unknown)'} ${s.producer.version}; graph "${s.graphName}"`);
  w('Inputs:');
  for (const i of s.inputs) w(`  ${i.name}  ${i.elemType} ${formatShape(i.shape)}`);
  w('Outputs:');
  for (const o of s.outputs) w(`  ${o.name}  ${o.elemType} ${formatShape(o.shape)}`);
  if (s.dynamicInputs.length) {
    w('Dynamic inputs (a build needs --shapes for each):');
    for (const d of s.dynamicInputs) w(`  ${d.name}: ${d.dims.join(', ')}`);
  }
  w(`Nodes: ${s.nodeCount}`);
  const ops = Object.entries(s.opHistogram).sort((a, b) => b[1] - a[1]);
  for (const [op, n] of ops) w(`  ${op.padEnd(24)} ${n}`);
  w(`Weights: ${formatBytes(s.initializerBytes)}`);
  if (s.externalData.files.length) w(`  external data: ${s.externalData.files.join(', ')} (${formatBytes(s.externalData.bytes)})`);
  return 0;
}
