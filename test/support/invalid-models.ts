// One generated model per class of problem the model checker (apps/service/model/model-check.ts)
// must refuse, as TensorRT's ONNX parser would, each with what the error must say (the node or
// tensor named); and the cases a strict ONNX checker refuses but the parser imports, which the
// check lets through with a note (ACCEPTED_MODELS). Shared by the reader's own tests and the
// CLI's (inspect and build exit 2 on each invalid one).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { onnx } from 'onnx-proto';
import { writeModel, type ModelSpec } from './onnx-gen.js';

export interface InvalidModelCase {
  name: string;
  spec: ModelSpec;
  /** What the error message must contain. */
  says: RegExp;
}

const g = (m: onnx.IModelProto) => m.graph!;
const node = (m: onnx.IModelProto, op: string) => g(m).node!.find((n) => n.opType === op)!;
const init = (m: onnx.IModelProto, name: string) => g(m).initializer!.find((t) => t.name === name)!;

/**
 * The base model (writeModel with layers: 1) has the nodes conv_0, relu_1, globalaveragepool_2,
 * reshape_3, matmul_4, add_5, softmax_6, the input "input" (and "flat_shape", also an
 * initializer, as older exporters wrote) and the output "probs".
 */
export const INVALID_MODELS: InvalidModelCase[] = [
  {
    name: 'a cycle (a node reads what a later node produces, from its own output)',
    spec: { mutate: (m) => void (node(m, 'Conv').input![0] = 'probs') },
    says: /the graph has a cycle through 7 nodes: node "conv_0" #0 \(Conv\) reads "probs" from node "softmax_6" #6 \(Softmax\), node "softmax_6" #6 \(Softmax\) reads "logits" from node "add_5" #5 \(Add\), .*node "relu_1" #1 \(Relu\) reads "conv0_out" from node "conv_0" #0 \(Conv\); TensorRT's parser refuses it/,
  },
  {
    name: 'a node reading its own output',
    spec: { mutate: (m) => void (node(m, 'Relu').input![0] = 'relu0_out') },
    says: /node "relu_1" #1 \(Relu\) reads its own output "relu0_out": the graph has a cycle/,
  },
  {
    name: 'a node input nothing produces',
    spec: { mutate: (m) => void (node(m, 'MatMul').input![0] = 'ghost') },
    says: /node "matmul_4" #4 \(MatMul\) reads "ghost", which no node produces and which is neither a graph input nor an initializer/,
  },
  { name: 'a graph output nothing produces', spec: { mutate: (m) => void (g(m).output![0].name = 'nowhere') }, says: /graph output "nowhere" is produced by no node/ },
  { name: 'no outputs', spec: { mutate: (m) => void (g(m).output = []) }, says: /the graph has no outputs/ },
  { name: 'an empty graph', spec: { mutate: (m) => Object.assign(g(m), { node: [], output: [] }) }, says: /the graph is empty: no nodes and no outputs/ },
  { name: 'an empty op type', spec: { mutate: (m) => void (node(m, 'Relu').opType = '') }, says: /node "relu_1" #1 \(no op_type\) has an empty op_type/ },
  { name: 'graph input element type 0', spec: { inputs: [{ name: 'input', shape: [1, 3, 8, 8], elemType: 0 }] }, says: /graph input "input" has element type 0, UNDEFINED/ },
  {
    name: 'graph output element type 999',
    spec: { mutate: (m) => void (g(m).output![0].type!.tensorType!.elemType = 999) },
    says: /graph output "probs" has element type 999, which is not an ONNX element type/,
  },
  { name: 'initializer element type 999', spec: { mutate: (m) => void (init(m, 'conv0.bias').dataType = 999) }, says: /initializer "conv0\.bias" has element type 999/ },
  { name: 'a graph input listed twice', spec: { mutate: (m) => void g(m).input!.push({ ...g(m).input![0] }) }, says: /graph input "input" is listed twice/ },
  {
    name: 'two nodes producing one name',
    spec: { mutate: (m) => void (node(m, 'Relu').output![0] = 'conv0_out') },
    says: /node "relu_1" #1 \(Relu\) produces "conv0_out", which node "conv_0" #0 \(Conv\) already produces/,
  },
  { name: 'an initializer defined twice', spec: { mutate: (m) => void g(m).initializer!.push({ ...init(m, 'conv0.bias') }) }, says: /initializer "conv0\.bias" is defined twice/ },
  {
    name: 'a node output named like an initializer',
    spec: { mutate: (m) => void (node(m, 'Softmax').output = ['fc.bias']) },
    says: /produces "fc\.bias", which is also an initializer/,
  },
  { name: 'a negative initializer dimension', spec: { mutate: (m) => void (init(m, 'conv0.bias').dims = [-8]) }, says: /initializer "conv0\.bias" has a negative dimension 0: -8/ },
  {
    name: 'an initializer dimension beyond 2^53',
    spec: { mutate: (m) => void (init(m, 'conv0.bias').dims = ['9007199254740993' as unknown as number]) },
    says: /initializer "conv0\.bias" has dimensions \[9007199254740993\]: more than 2\^53 elements/,
  },
  {
    name: 'a 2^62-element initializer with no data',
    spec: { mutate: (m) => void Object.assign(init(m, 'conv0.bias'), { dims: [2 ** 31, 2 ** 31], rawData: undefined }) },
    says: /initializer "conv0\.bias" has dimensions \[2147483648, 2147483648\]: more than 2\^53 elements/,
  },
  {
    name: 'an initializer with no data for its dims',
    spec: { mutate: (m) => void Object.assign(init(m, 'conv0.bias'), { rawData: undefined }) },
    says: /initializer "conv0\.bias" has dimensions \[8\] \(8 elements, 32 bytes of raw_data\), but no data|initializer "conv0\.bias" has dimensions \[8\] \(8 elements, 8 data entries\), but no data/,
  },
  {
    name: 'raw data shorter than the dims say',
    spec: { mutate: (m) => void (init(m, 'conv0.bias').rawData = Buffer.alloc(3)) },
    says: /initializer "conv0\.bias" has dimensions \[8\] \(8 elements, 32 bytes of raw_data\), but 3 bytes of raw_data/,
  },
  {
    name: 'typed data longer than the dims say',
    spec: { mutate: (m) => void (init(m, 'fc.bias').dims = [4]) },
    says: /initializer "fc\.bias" has dimensions \[4\] \(4 elements, 4 data entries\), but 10 data entries/,
  },
  {
    name: 'external data past the end of its file',
    spec: {
      externalData: 'w.bin',
      mutate: (m) => void (init(m, 'fc.weight').externalData!.find((e) => e.key === 'offset')!.value = '1000000000'),
    },
    says: /initializer "fc\.weight"'s external data ends at byte 10000003\d\d of "w\.bin", but that file has \d+ bytes/,
  },
  {
    name: 'a fixed input shape whose element count overflows',
    spec: { inputs: [{ name: 'input', shape: [2 ** 31 - 1, 2 ** 31 - 1, 2 ** 31 - 1, 3] }] },
    says: /graph input "input" has a fixed shape of \d+ elements, more than TensorRT's int64 volume holds/,
  },
];

/**
 * What onnx.checker refuses but TensorRT's parser imports: each is let through, `notes` saying
 * what the check saw (and `pluginOps` where TensorRT would look for a plugin).
 */
export const ACCEPTED_MODELS: Array<{ name: string; spec: ModelSpec; notes: RegExp[]; pluginOps?: string[] }> = [
  {
    name: 'nodes out of topological order (all reversed)',
    spec: { mutate: (m) => void g(m).node!.reverse() },
    notes: [
      /the nodes are not in topological order \(6 nodes read the output of a later node; first: node "softmax_6" #0 \(Softmax\) reads "logits", which node "add_5" #1 \(Add\) after it produces\); TensorRT's ONNX parser sorts them itself, and so did this check: they were reordered/,
    ],
  },
  {
    name: 'an op type ai.onnx does not have (TensorRT tries a plugin of that name)',
    spec: { mutate: (m) => void (node(m, 'Relu').opType = 'Relux') },
    notes: [],
    pluginOps: ['ai.onnx.Relux'],
  },
  {
    name: 'an op newer than the imported opset',
    spec: { opset: 17, mutate: (m) => void (node(m, 'Relu').opType = 'Gelu') },
    notes: [/node "relu_1" #1 \(Gelu\): Gelu exists from ai\.onnx opset 20, but the model imports opset 17 \(TensorRT's parser imports it all the same\)/],
  },
  { name: 'a graph output listed twice', spec: { mutate: (m) => void g(m).output!.push({ ...g(m).output![0] }) }, notes: [] },
  { name: 'opset 0', spec: { opset: 0 }, notes: [/opset_import ai\.onnx version 0: ONNX [\d.]+ defines ai\.onnx opsets 1 to \d+ \(TensorRT's parser does not refuse it\)/] },
  { name: 'opset 100000', spec: { opset: 100000 }, notes: [/opset_import ai\.onnx version 100000/] },
];

/** Writes case `c` as <dir>/<index>/m.onnx (its own folder: external data sits beside it). */
export function writeInvalidModel(dir: string, c: InvalidModelCase): string {
  const sub = fs.mkdtempSync(path.join(dir, 'bad-'));
  return writeModel(path.join(sub, 'm.onnx'), { layers: 1, ...c.spec });
}
