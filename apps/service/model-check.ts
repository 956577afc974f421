// What `onnx.checker` would refuse, found while the model reader walks the file (so the model is
// read once and the 1 GiB model costs no more), and thrown as ServiceError('bad_model') naming the
// node or tensor, before any build starts. Real TensorRT's parser refuses most of these only after
// the user waited for a worker; the simulated backend would "build" them.
//
// Checked: the main graph's well-formedness (every node input is a graph input, an initializer or
// the output of an EARLIER node: this finds cycles and unsorted graphs alike; graph outputs are
// produced; input, output, initializer and node-output names unique; at least one output), known
// element types (graph inputs/outputs and initializers), op types non-empty and known to their
// ONNX domain at the imported opset (./onnx-ops.json), opset versions ONNX defines, initializer
// dimensions (not negative, element count addressable, consistent with the data present).
// Not checked: If/Loop/Scan bodies' own well-formedness (their nodes may use the enclosing graph's
// names; their op types are checked), attribute types, shape inference.
//
// Operators of any other domain (com.microsoft, a team's own plugins) are not refused: they are
// listed in the summary's `pluginOps`, since TensorRT builds them only with a plugin.
import type { onnx } from 'onnx-proto';
import { ServiceError } from './api.js';
import { elemTypeBits, isKnownElemType } from './onnx-types.js';
import type { DataSizes } from './onnx-wire.js';
import opsData from './onnx-ops.json';

interface DomainOps {
  maxOpset: number;
  ops: Record<string, number>;
}
const ONNX_VERSION: string = opsData.onnxVersion;
const DOMAINS: Record<string, DomainOps> = opsData.domains;

const MAX_ELEMENTS = BigInt(Number.MAX_SAFE_INTEGER);

type Int64 = number | { toString(): string } | null | undefined;
const big = (v: Int64): bigint => (v === null || v === undefined ? 0n : typeof v === 'number' ? BigInt(Math.trunc(v)) : BigInt(v.toString()));

/** ONNX's own name for the default domain. */
export const domainOf = (d: string | null | undefined): string => (!d ? 'ai.onnx' : d);

/** A domain whose operators ONNX defines (the others are custom: plugins). */
export const isOnnxDomain = (d: string): boolean => Object.hasOwn(DOMAINS, d);

interface NodeRecord {
  label: string;
  inputs: string[];
}

export class ModelChecker {
  private readonly problems: string[] = [];
  private nodeIndex = 0;
  private readonly nodes: NodeRecord[] = [];
  /** Main-graph node output → index of the node producing it. */
  private readonly produced = new Map<string, number>();
  private readonly initializers = new Set<string>();
  private readonly inputs = new Set<string>();
  private readonly outputs: string[] = [];
  /** domain + "\0" + op → the first node using it (for the opset check once the header is read). */
  private readonly opsUsed = new Map<string, string>();
  readonly pluginOps = new Set<string>();

  constructor(private readonly abs: string) {}

  private problem(text: string): void {
    this.problems.push(text);
  }

  private static nodeLabel(n: onnx.INodeProto, index: number, depth: number): string {
    const where = depth > 0 ? ' in a subgraph' : '';
    return `node ${n.name ? `"${n.name}" ` : ''}#${index}${where} (${n.opType || 'no op_type'})`;
  }

  node(n: onnx.INodeProto, depth: number): void {
    const index = depth === 0 ? this.nodeIndex++ : -1;
    const label = ModelChecker.nodeLabel(n, index < 0 ? this.nodes.length : index, depth);
    if (!n.opType) this.problem(`${label} has an empty op_type`);
    else {
      const key = `${domainOf(n.domain)}\0${n.opType}`;
      if (!this.opsUsed.has(key)) this.opsUsed.set(key, label);
    }
    if (depth > 0) return;
    this.nodes.push({ label, inputs: (n.input ?? []).filter((x) => x !== '') });
    for (const out of n.output ?? []) {
      if (out === '') continue; // an optional output left out
      const prev = this.produced.get(out);
      if (prev !== undefined) this.problem(`${label} produces "${out}", which ${this.nodes[prev].label} already produces (names must be unique)`);
      else this.produced.set(out, index);
    }
  }

  initializer(t: onnx.ITensorProto, data: DataSizes | undefined, external: boolean, depth: number): void {
    const name = t.name ?? '';
    const what = `initializer "${name}"${depth > 0 ? ' in a subgraph' : ''}`;
    if (depth === 0) {
      if (this.initializers.has(name)) this.problem(`${what} is defined twice (names must be unique)`);
      this.initializers.add(name);
    }
    if (!isKnownElemType(t.dataType)) {
      this.problem(`${what} has element type ${t.dataType ?? 0}, ${t.dataType ? 'which is not an ONNX element type' : 'UNDEFINED'}`);
      return;
    }
    let elements = 1n;
    const dims = (t.dims ?? []).map(big);
    for (const [i, d] of dims.entries()) {
      if (d < 0n) return this.problem(`${what} has a negative dimension ${i}: ${d}`);
      elements *= d;
      if (elements > MAX_ELEMENTS) return this.problem(`${what} has dimensions [${dims.join(', ')}]: more than 2^53 elements, beyond what can be addressed`);
    }
    if (external || !data) return; // external lengths are checked against the data file
    const got = inlineEntries(data);
    const want = expectedEntries(t.dataType ?? 0, elements, got.raw);
    if (got.entries !== want) {
      const unit = got.raw ? 'bytes of raw_data' : 'data entries';
      this.problem(`${what} has dimensions [${dims.join(', ')}] (${elements} elements, ${want} ${unit}), but ${got.entries === 0n ? 'no data' : `${got.entries} ${unit}`}`);
    }
  }

  sparseInitializer(name: string, depth: number): void {
    if (depth > 0) return;
    if (this.initializers.has(name)) this.problem(`initializer "${name}" is defined twice (names must be unique)`);
    this.initializers.add(name);
  }

  input(vi: onnx.IValueInfoProto): void {
    const name = vi.name ?? '';
    if (this.inputs.has(name)) this.problem(`graph input "${name}" is listed twice (names must be unique)`);
    this.inputs.add(name);
    this.valueType(vi, `graph input "${name}"`);
  }

  output(vi: onnx.IValueInfoProto): void {
    const name = vi.name ?? '';
    if (this.outputs.includes(name)) this.problem(`graph output "${name}" is listed twice (names must be unique)`);
    this.outputs.push(name);
    this.valueType(vi, `graph output "${name}"`);
  }

  private valueType(vi: onnx.IValueInfoProto, what: string): void {
    const tt = vi.type?.tensorType;
    if (!tt) return; // no type given, or a sequence/map/optional: not an element-type question
    if (!isKnownElemType(tt.elemType)) this.problem(`${what} has element type ${tt.elemType ?? 0}, ${tt.elemType ? 'which is not an ONNX element type' : 'UNDEFINED'}`);
    let elements = 1n;
    for (const d of tt.shape?.dim ?? []) {
      if ((d as onnx.TensorShapeProto.Dimension).value !== 'dimValue') continue;
      const v = big(d.dimValue as Int64);
      if (v > 0n) elements *= v;
    }
    if (elements > 2n ** 63n - 1n) this.problem(`${what} has a fixed shape of ${elements} elements, more than TensorRT's int64 volume holds`);
  }

  /** The checks that need the whole model; throws the problems found (all of them, numbered). */
  finish(opsets: ReadonlyArray<{ domain: string; version: number }>): { pluginOps: string[] } {
    const imported = new Map<string, number>();
    for (const { domain, version } of opsets) {
      const known = DOMAINS[domain];
      if (known && (version < 1 || version > known.maxOpset)) {
        this.problem(`opset_import ${domain} version ${version}: ONNX ${ONNX_VERSION} defines ${domain} opsets 1 to ${known.maxOpset}`);
      }
      imported.set(domain, version);
    }
    for (const [key, label] of this.opsUsed) {
      const [domain, op] = key.split('\0');
      const known = DOMAINS[domain];
      if (!known) {
        this.pluginOps.add(`${domain}.${op}`);
        continue;
      }
      const since = Object.hasOwn(known.ops, op) ? known.ops[op] : undefined;
      if (since === undefined) {
        this.problem(`${label}: "${op}" is not an operator of ${domain} (ONNX ${ONNX_VERSION}); a custom operator belongs in its own domain and needs a TensorRT plugin`);
        continue;
      }
      const version = imported.get(domain);
      if (version !== undefined && version >= 1 && since > version) this.problem(`${label}: ${op} exists from ${domain} opset ${since}, but the model imports opset ${version}`);
    }

    if (this.nodes.length === 0 && this.outputs.length === 0) this.problem('the graph is empty: no nodes and no outputs');
    else if (this.outputs.length === 0) this.problem('the graph has no outputs');
    for (const name of this.initializers) {
      const at = this.produced.get(name);
      if (at !== undefined) this.problem(`${this.nodes[at].label} produces "${name}", which is also an initializer (names must be unique)`);
    }
    for (const name of this.inputs) {
      const at = this.produced.get(name);
      if (at !== undefined) this.problem(`${this.nodes[at].label} produces "${name}", which is also a graph input (names must be unique)`);
    }
    const available = (name: string) => this.inputs.has(name) || this.initializers.has(name);
    this.nodes.forEach((n, i) => {
      for (const name of n.inputs) {
        if (available(name)) continue;
        const by = this.produced.get(name);
        if (by === undefined) this.problem(`${n.label} reads "${name}", which no node produces and which is neither a graph input nor an initializer`);
        else if (by >= i) {
          this.problem(
            by === i
              ? `${n.label} reads its own output "${name}": the graph has a cycle`
              : `${n.label} reads "${name}" before ${this.nodes[by].label} produces it: the graph has a cycle or is not in topological order`,
          );
        }
      }
    });
    for (const name of this.outputs) {
      if (!available(name) && !this.produced.has(name)) this.problem(`graph output "${name}" is produced by no node (nor is it a graph input or an initializer)`);
    }

    if (this.problems.length) {
      const shown = this.problems.slice(0, 10);
      const more = this.problems.length - shown.length;
      const text = shown.length === 1 ? shown[0] : shown.map((p, i) => `(${i + 1}) ${p}`).join('; ');
      throw new ServiceError('bad_model', `${this.abs} is not a valid ONNX model: ${text}${more > 0 ? `; and ${more} more problem${more > 1 ? 's' : ''}` : ''}`);
    }
    return { pluginOps: [...this.pluginOps].sort() };
  }
}

/** Entries of inline data present: raw_data bytes, or elements of the typed fields. */
function inlineEntries(d: DataSizes): { raw: boolean; entries: bigint } {
  if (d.bytes[9] !== undefined) return { raw: true, entries: BigInt(d.bytes[9]) };
  let n = 0;
  for (const f of [4, 5, 6, 7, 10, 11]) n += d.count[f] ?? 0;
  return { raw: false, entries: BigInt(n) };
}

/** Entries `elements` of `dataType` take: bytes in raw_data (packed types rounded up), or typed-field entries as onnx.proto lays them out. */
function expectedEntries(dataType: number, elements: bigint, raw: boolean): bigint {
  const bits = BigInt(elemTypeBits(dataType));
  if (raw) return (elements * bits + 7n) / 8n;
  if (dataType === 14 || dataType === 15) return elements * 2n; // complex: real, imaginary
  if (bits > 0n && bits < 8n) return (elements * bits + 7n) / 8n; // 4-bit: two a byte, 2-bit: four, one byte per int32_data entry
  return elements;
}
