// What TensorRT's ONNX parser (onnx-tensorrt's ModelImporter) would refuse, found while the model
// reader walks the file (so the model is read once and the 1 GiB model costs no more), and thrown
// as ServiceError('bad_model') naming the node or tensor, before any build starts. Real TensorRT
// refuses these only after the user waited for a worker; the simulated backend would "build" them.
// Nothing more is refused: a model the parser imports is a model this check lets through, with
// notes where it differs from a strict reading of the ONNX spec (docs/models.md).
//
// What the parser does, and so this check (onnx-tensorrt ModelImporter.cpp, toposort.hpp,
// ImporterContext.cpp, WeightsContext.cpp, onnxOpImporters.cpp' LocalFunctionImporter; 10.x):
// - Graph order: parseGraph sorts each graph's nodes itself (a depth-first post-order over the
//   producers of each node's inputs, nodes taken in file order) and fails only on a real cycle
//   ("Failed to sort the model topologically"). Here: the same sort, for the main graph and each
//   If/Loop/Scan body, with a body's reads of enclosing graphs' names counted as its node's inputs
//   (newer parsers' `subgraphOuterDeps`). Out of order: a note, and layers come in sorted order.
//   A cycle: refused, naming the nodes on it.
// - Local functions (ModelProto.functions): a node whose op is not an ONNX operator and whose
//   op_type names a local function is imported by inlining the function's nodes (in their file
//   order: a function's nodes are not sorted). Here: expanded the same way into the layer list and
//   the operator histogram; not listed as plugin operators.
//
// Refusals kept, each one the parser (or TensorRT's builder) also makes:
// - a cycle                                 toposort → "Failed to sort the model topologically"
// - two nodes producing one name            toposort → "Output name is not unique"
// - a node output also named as an initializer or a graph input, an initializer or graph input
//   listed twice                            registerTensor → "ONNX graph has duplicate tensor name"
// - a node input nothing produces           parseNode → "Node input was not registered"
// - a graph output nothing produces         importModel → "The output tensor was not registered"
// - no outputs at all                       TensorRT's builder refuses a network without outputs
// - an empty op_type                        no importer, no plugin named "": "Plugin not found"
// - element types ONNX does not define (inputs, outputs, initializers)
//                                           convertDtype / convertOnnxWeights fail
// - initializer dims negative, beyond addressable, or not matching the data present
//                                           validateOnnxInitializer / "Size mismatch when importing"
// - a fixed input/output volume past int64  TensorRT's volume is int64
// - a local function called with a different number of inputs than it declares
//                                           LocalFunctionImporter → "unexpected number of inputs"
// - a local function reading a name before its own later node produces it
//                                           its nodes are imported in file order: "not registered"
// - a local function that calls itself      the parser recurses until its nesting limit (24)
// Dropped (the parser does not refuse them): an op a known ONNX domain does not define (TensorRT
// tries it as a plugin: listed in pluginOps), an op newer than the imported opset and an opset
// version ONNX does not define (notes), a graph output listed twice.
// Not checked: attribute types, shape inference; the operators' own importers' checks.
import type { onnx } from 'onnx-proto';
import { ServiceError } from '../api.js';
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
/** onnx-tensorrt's kMAX_NESTED_SUBGRAPHS: bodies and local functions nested deeper are refused. */
export const MAX_FUNCTION_NESTING = 24;
/** Layers after expanding local functions; past this the list would not fit a summary (a tool limit, not TensorRT's). */
export const MAX_EXPANDED_LAYERS = 2_000_000;

type Int64 = number | { toString(): string } | null | undefined;
const big = (v: Int64): bigint => (v === null || v === undefined ? 0n : typeof v === 'number' ? BigInt(Math.trunc(v)) : BigInt(v.toString()));

/** ONNX's own name for the default domain. */
export const domainOf = (d: string | null | undefined): string => (!d ? 'ai.onnx' : d);

/** A domain whose operators ONNX defines (the others are custom: plugins). */
export const isOnnxDomain = (d: string): boolean => Object.hasOwn(DOMAINS, d);

/** An operator ONNX defines in `domain` (at any opset): TensorRT's parser has an importer for it, or says why not. */
const isOnnxOp = (domain: string, op: string): boolean => isOnnxDomain(domain) && Object.hasOwn(DOMAINS[domain].ops, op);

/** How an operator is shown in the histogram and layer list: ONNX's own bare, others with their domain. */
export const opLabel = (domain: string, op: string): string => (domain === 'ai.onnx' ? op : `${domain}.${op}`);

interface NodeRec {
  label: string;
  name: string;
  domain: string;
  op: string;
  inputs: string[];
  outputs: string[];
  /** Names its bodies read from enclosing graphs: inputs too, as far as order goes. */
  outer: string[];
}

interface Scope {
  depth: number;
  nodes: NodeRec[];
  inputs: Set<string>;
  initializers: Set<string>;
  /** The node whose attribute this body is (none for the main graph). */
  holder?: NodeRec;
}

interface LocalFunction {
  name: string;
  domain: string;
  inputs: string[];
  nodes: Array<{ name: string; domain: string; op: string; inputs: string[]; outputs: string[] }>;
}

export interface CheckedModel {
  pluginOps: string[];
  /** Main-graph layers in the order TensorRT's parser imports them, local functions expanded. */
  layers: Array<{ name: string; op: string }>;
  opHistogram: Record<string, number>;
  /** What the model does that a strict ONNX reading would not, and what was done about it (a warning each). */
  notes: string[];
}

export class ModelChecker {
  private readonly problems: string[] = [];
  private readonly notes: string[] = [];
  private nodeIndex = 0;
  private readonly main: Scope = { depth: 0, nodes: [], inputs: new Set(), initializers: new Set() };
  /** The graph being walked and those enclosing it (main first). */
  private readonly scopes: Scope[] = [this.main];
  /** Main-graph sort order (indices into main.nodes), once finished. */
  private order: number[] = [];
  private readonly outputs: string[] = [];
  /** domain + "\0" + op → the first node using it (for the opset check once the header is read). */
  private readonly opsUsed = new Map<string, string>();
  private readonly functions = new Map<string, LocalFunction>();
  /** Nodes of an op ONNX does not define: local-function calls once the functions are read (they follow the graph). */
  private readonly maybeCalls: Array<{ label: string; op: string; inputs: number }> = [];
  readonly pluginOps = new Set<string>();

  constructor(private readonly abs: string) {}

  private problem(text: string): void {
    this.problems.push(text);
  }

  private get top(): Scope {
    return this.scopes[this.scopes.length - 1];
  }

  graph(edge: 'start' | 'end', depth: number): void {
    if (depth === 0) return; // the main graph is finished with the model (finish())
    if (edge === 'start') {
      const parent = this.top;
      this.scopes.push({ depth, nodes: [], inputs: new Set(), initializers: new Set(), holder: parent.nodes[parent.nodes.length - 1] });
      return;
    }
    const body = this.scopes.pop()!;
    this.sortScope(body);
  }

  bodyValue(kind: 'input' | 'output', name: string): void {
    if (kind === 'input' && name) this.top.inputs.add(name);
  }

  localFunction(f: onnx.IFunctionProto): void {
    const name = f.name ?? '';
    // The parser keys local functions by name alone and keeps the first (std::map insert).
    if (this.functions.has(name)) return;
    this.functions.set(name, {
      name,
      domain: f.domain ?? '',
      inputs: f.input ?? [],
      nodes: (f.node ?? []).map((n) => ({
        name: n.name ?? '',
        domain: domainOf(n.domain),
        op: n.opType ?? '',
        inputs: (n.input ?? []).filter((x) => x !== ''),
        outputs: (n.output ?? []).filter((x) => x !== ''),
      })),
    });
  }

  private static nodeLabel(n: onnx.INodeProto, index: number, holder: NodeRec | undefined): string {
    const where = holder ? ` in a subgraph of ${holder.label}` : '';
    return `node ${n.name ? `"${n.name}" ` : ''}#${index}${where} (${n.opType || 'no op_type'})`;
  }

  node(n: onnx.INodeProto, depth: number): void {
    const scope = this.scopes[depth] ?? this.top;
    const index = depth === 0 ? this.nodeIndex++ : scope.nodes.length;
    const label = ModelChecker.nodeLabel(n, index, scope.holder);
    const domain = domainOf(n.domain);
    if (!n.opType) this.problem(`${label} has an empty op_type: TensorRT's parser has no importer and no plugin for it`);
    else {
      const key = `${domain}\0${n.opType}`;
      if (!this.opsUsed.has(key)) this.opsUsed.set(key, label);
    }
    if (n.opType && !isOnnxOp(domain, n.opType)) this.maybeCalls.push({ label, op: n.opType, inputs: (n.input ?? []).length });
    scope.nodes.push({
      label,
      name: n.name ?? '',
      domain,
      op: n.opType ?? '',
      inputs: (n.input ?? []).filter((x) => x !== ''),
      outputs: (n.output ?? []).filter((x) => x !== ''), // an optional output left out
      outer: [],
    });
  }

  initializer(t: onnx.ITensorProto, data: DataSizes | undefined, external: boolean, depth: number): void {
    const name = t.name ?? '';
    const what = `initializer "${name}"${depth > 0 ? ' in a subgraph' : ''}`;
    const scope = this.scopes[depth] ?? this.top;
    if (scope.initializers.has(name)) this.problem(`${what} is defined twice (names must be unique)`);
    scope.initializers.add(name);
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
    const scope = this.scopes[depth] ?? this.top;
    if (scope.initializers.has(name)) this.problem(`initializer "${name}" is defined twice (names must be unique)`);
    scope.initializers.add(name);
  }

  input(vi: onnx.IValueInfoProto): void {
    const name = vi.name ?? '';
    if (this.main.inputs.has(name)) this.problem(`graph input "${name}" is listed twice (names must be unique)`);
    this.main.inputs.add(name);
    this.valueType(vi, `graph input "${name}"`);
  }

  output(vi: onnx.IValueInfoProto): void {
    const name = vi.name ?? '';
    // Listed twice: the parser marks the same tensor twice; not refused.
    if (!this.outputs.includes(name)) this.outputs.push(name);
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

  /**
   * Sorts a graph's nodes as onnx-tensorrt's toposort does (depth-first post-order over each
   * node's producers, nodes in file order), reporting duplicate producers, unresolved names and a
   * cycle (refused) and an order that differs from the file's (a note). A body's names that are
   * not its own are its holder's (outer-scope reads), resolved in the enclosing graph.
   */
  private sortScope(scope: Scope): number[] {
    const { nodes } = scope;
    const where = scope.holder ? ` in a subgraph of ${scope.holder.label}` : '';
    const producer = new Map<string, number>();
    nodes.forEach((n, i) => {
      for (const out of n.outputs) {
        const prev = producer.get(out);
        if (prev !== undefined) this.problem(`${n.label} produces "${out}", which ${nodes[prev].label} already produces (names must be unique)`);
        else producer.set(out, i);
      }
    });
    const local = (name: string) => scope.inputs.has(name) || scope.initializers.has(name);
    for (const name of scope.initializers) {
      const at = producer.get(name);
      if (at !== undefined) this.problem(`${nodes[at].label} produces "${name}", which is also an initializer (names must be unique)`);
    }
    for (const name of scope.inputs) {
      if (scope.initializers.has(name)) continue; // IR < 4: initializers listed among the inputs
      const at = producer.get(name);
      if (at !== undefined) this.problem(`${nodes[at].label} produces "${name}", which is also a graph input (names must be unique)`);
    }
    // Each node's producers (with the name read), in input order: what the sort walks.
    const deps: Array<Array<[number, string]>> = nodes.map((n) => {
      const out: Array<[number, string]> = [];
      const read = (name: string, outerRead: boolean) => {
        if (local(name)) return;
        const by = producer.get(name);
        if (by !== undefined) out.push([by, name]);
        else if (scope.holder) {
          if (!scope.holder.outer.includes(name)) scope.holder.outer.push(name);
        } else {
          this.problem(
            outerRead
              ? `a subgraph of ${n.label} reads "${name}", which no node produces and which is neither a graph input nor an initializer`
              : `${n.label} reads "${name}", which no node produces and which is neither a graph input nor an initializer`,
          );
        }
      };
      for (const name of n.inputs) read(name, false);
      for (const name of n.outer) read(name, true);
      return out;
    });

    const UNVISITED = 0;
    const ACTIVE = 1;
    const DONE = 2;
    const state = new Uint8Array(nodes.length);
    const order: number[] = [];
    // Iterative: a 50,000-node chain would overflow the stack as recursion.
    const stack: Array<{ i: number; k: number; via?: string }> = [];
    for (let s = 0; s < nodes.length; s++) {
      if (state[s] !== UNVISITED) continue;
      state[s] = ACTIVE;
      stack.push({ i: s, k: 0 });
      while (stack.length) {
        const top = stack[stack.length - 1];
        const d = deps[top.i];
        if (top.k < d.length) {
          const [next, name] = d[top.k++];
          if (state[next] === ACTIVE) {
            this.problem(cycleText(nodes, stack, next, name, where));
            return [];
          }
          if (state[next] === UNVISITED) {
            state[next] = ACTIVE;
            stack.push({ i: next, k: 0, via: name });
          }
          continue;
        }
        state[top.i] = DONE;
        order.push(top.i);
        stack.pop();
      }
    }
    let late = 0;
    let first: string | undefined;
    nodes.forEach((n, i) => {
      const ahead = deps[i].find(([by]) => by > i);
      if (!ahead) return;
      late++;
      first ??= `${n.label} reads "${ahead[1]}", which ${nodes[ahead[0]].label} after it produces`;
    });
    if (late > 0) {
      this.notes.push(
        `the nodes${where} are not in topological order (${late} node${late > 1 ? 's read' : ' reads'} the output of a later node; first: ${first}); ` +
          `TensorRT's ONNX parser sorts them itself, and so did this check: they were reordered`,
      );
    }
    return order;
  }

  /** How a node's op is imported: an ONNX operator, a local function to inline, or a plugin. */
  private resolve(domain: string, op: string): { kind: 'onnx' } | { kind: 'function'; f: LocalFunction } | { kind: 'plugin' } {
    if (isOnnxOp(domain, op)) return { kind: 'onnx' };
    const f = this.functions.get(op);
    if (f) return { kind: 'function', f };
    return { kind: 'plugin' };
  }

  /** A local function's own problems, once: nodes read in file order (the parser does not sort them), recursion. */
  private checkFunction(f: LocalFunction, calling: string[], checked: Set<string>): void {
    if (checked.has(f.name)) return;
    checked.add(f.name);
    const what = `local function "${f.domain ? `${f.domain}.` : ''}${f.name}"`;
    const producedAt = new Map<string, number>();
    f.nodes.forEach((n, i) => n.outputs.forEach((o) => producedAt.has(o) || producedAt.set(o, i)));
    let outOfOrder = false; // the first such read is named; the parser stops there too
    f.nodes.forEach((n, i) => {
      for (const name of n.inputs) {
        const at = producedAt.get(name);
        if (!outOfOrder && at !== undefined && at >= i && !f.inputs.includes(name)) {
          outOfOrder = true;
          this.problem(
            `${what}: node ${n.name ? `"${n.name}" ` : ''}#${i} (${n.op}) reads "${name}" before its node #${at} produces it; ` +
              `TensorRT's parser imports a function's nodes in file order (it sorts only graphs)`,
          );
          return;
        }
      }
      const r = this.resolve(n.domain, n.op);
      if (r.kind !== 'function') return;
      if (calling.includes(r.f.name) || r.f === f) {
        this.problem(
          `${what} calls itself (${[...calling, f.name, r.f.name].join(' → ')}): TensorRT's parser would nest it until its limit of ${MAX_FUNCTION_NESTING} and refuse it`,
        );
        return;
      }
      this.checkFunction(r.f, [...calling, f.name], checked);
    });
  }

  /** The checks that need the whole model; throws the problems found (all of them, numbered). */
  finish(opsets: ReadonlyArray<{ domain: string; version: number }>): CheckedModel {
    const imported = new Map<string, number>();
    for (const { domain, version } of opsets) {
      const known = DOMAINS[domain];
      if (known && (version < 1 || version > known.maxOpset)) {
        this.notes.push(`opset_import ${domain} version ${version}: ONNX ${ONNX_VERSION} defines ${domain} opsets 1 to ${known.maxOpset} (TensorRT's parser does not refuse it)`);
      }
      imported.set(domain, version);
    }
    const checkedFunctions = new Set<string>();
    for (const [key, label] of this.opsUsed) {
      const [domain, op] = key.split('\0');
      const r = this.resolve(domain, op);
      if (r.kind === 'function') {
        this.checkFunction(r.f, [], checkedFunctions);
        continue;
      }
      if (r.kind === 'plugin') {
        this.pluginOps.add(`${domain}.${op}`);
        continue;
      }
      const since = DOMAINS[domain].ops[op];
      const version = imported.get(domain);
      if (version !== undefined && version >= 1 && since > version) {
        this.notes.push(`${label}: ${op} exists from ${domain} opset ${since}, but the model imports opset ${version} (TensorRT's parser imports it all the same)`);
      }
    }

    if (this.main.nodes.length === 0 && this.outputs.length === 0) this.problem('the graph is empty: no nodes and no outputs');
    else if (this.outputs.length === 0) this.problem('the graph has no outputs');
    this.order = this.sortScope(this.main);
    const produced = new Set(this.main.nodes.flatMap((n) => n.outputs));
    for (const name of this.outputs) {
      if (!this.main.inputs.has(name) && !this.main.initializers.has(name) && !produced.has(name)) {
        this.problem(`graph output "${name}" is produced by no node (nor is it a graph input or an initializer)`);
      }
    }

    for (const c of this.maybeCalls) {
      const f = this.functions.get(c.op);
      // The parser compares the call's inputs, optional ones left out ("") included, with the function's.
      if (f && c.inputs !== f.inputs.length) {
        this.problem(
          `${c.label} calls local function "${f.name}" with ${c.inputs} input${c.inputs === 1 ? '' : 's'}, but it declares ${f.inputs.length}: TensorRT's parser refuses the call`,
        );
      }
    }

    const layers: CheckedModel['layers'] = [];
    const opHistogram: Record<string, number> = {};
    const calls = new Map<string, number>();
    if (!this.problems.length) this.expandMain(layers, opHistogram, calls);
    if (calls.size) {
      const list = [...calls].map(([f, n]) => `${f} (${n} call${n > 1 ? 's' : ''})`).join(', ');
      this.notes.push(`model-local functions expanded into their nodes, as TensorRT's ONNX parser imports them: ${list}`);
    }

    if (this.problems.length) {
      // A short first line (what, where, how many), then one problem per line: a terminal prints
      // it line by line and the UI folds the list under the first line. A line break inside a
      // problem (a name from the model) is written as \n so each problem stays one line.
      const n = this.problems.length;
      const shown = this.problems.slice(0, 10);
      const more = n - shown.length;
      const lines = shown.map((p, i) => `  ${i + 1}. ${p.replace(/\r/g, '\\r').replace(/\n/g, '\\n')}`);
      if (more > 0) lines.push(`  … and ${more} more problem${more > 1 ? 's' : ''}`);
      const head = `${this.abs} is not a valid ONNX model for TensorRT: ${n} problem${n > 1 ? 's' : ''}${more > 0 ? ` (the first ${shown.length} listed)` : ''}`;
      throw new ServiceError('bad_model', [head, ...lines].join('\n'));
    }
    return { pluginOps: [...this.pluginOps].sort(), layers, opHistogram, notes: [...this.notes] };
  }

  /** The main graph's layers in sorted order, each local-function call replaced by its nodes. */
  private expandMain(layers: CheckedModel['layers'], hist: Record<string, number>, calls: Map<string, number>): void {
    const add = (name: string, op: string) => {
      if (layers.length >= MAX_EXPANDED_LAYERS) {
        throw new ServiceError('bad_model', `${this.abs}: expanding its local functions makes more than ${MAX_EXPANDED_LAYERS} layers; this tool does not list that many`);
      }
      layers.push({ name, op });
      hist[op] = (hist[op] ?? 0) + 1;
    };
    const expand = (f: LocalFunction, prefix: string, depth: number) => {
      const key = opLabel(domainOf(f.domain), f.name);
      calls.set(key, (calls.get(key) ?? 0) + 1);
      f.nodes.forEach((n, j) => {
        const op = opLabel(n.domain, n.op);
        const name = `${prefix}/${n.name || `${op}_${j}`}`;
        const r = this.resolve(n.domain, n.op);
        // checkFunction refused recursion; the depth bound is the parser's own.
        if (r.kind === 'function' && depth < MAX_FUNCTION_NESTING) expand(r.f, name, depth + 1);
        else add(name, op);
      });
    };
    for (const i of this.order) {
      const n = this.main.nodes[i];
      const op = opLabel(n.domain, n.op || '?');
      const name = n.name || `${op}_${i}`;
      const r = this.resolve(n.domain, n.op);
      if (r.kind === 'function') expand(r.f, name, 1);
      else add(name, op);
    }
  }
}

/** The nodes on the cycle the sort met: from `at` (on the stack) to the stack's top, which reads `name` from `at`. */
function cycleText(nodes: NodeRec[], stack: Array<{ i: number; via?: string }>, at: number, name: string, where: string): string {
  const from = stack.findIndex((f) => f.i === at);
  const ring = stack.slice(from);
  if (ring.length === 1) return `${nodes[at].label} reads its own output "${name}": the graph${where} has a cycle`;
  // Each frame after the first was reached through the name its predecessor reads from it.
  const steps = ring.map(
    (f, j) => `${nodes[f.i].label} reads "${j + 1 < ring.length ? ring[j + 1].via : name}" from ${j + 1 < ring.length ? nodes[ring[j + 1].i].label : nodes[at].label}`,
  );
  return `the graph${where} has a cycle through ${ring.length} nodes: ${steps.join(', ')}; TensorRT's parser refuses it ("Failed to sort the model topologically")`;
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
