// Worker labels and build targets: `k=v` pairs. A worker labels itself from what its backend
// probe found (gpu, cc, trt); `--labels` adds or overrides. A build's target matches a worker when
// every pair of the target is among the worker's labels.
import type { BackendInfo } from '../shared/protocol.js';

export type Labels = Record<string, string>;

const KEY = /^[A-Za-z0-9_.\-/]+$/;
const VALUE = /^[^,=\s]+$/;

/** Parses `k=v,k2=v2` (also repeated flags joined by commas); errors name the bad pair. */
export function parseLabels(spec: string, what = '--labels'): Labels {
  const out: Labels = {};
  for (const raw of spec.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`${what}: "${pair}" is not key=value`);
    const k = pair.slice(0, eq);
    const v = pair.slice(eq + 1);
    if (!KEY.test(k)) throw new Error(`${what}: label name "${k}" may only hold letters, digits and _ . - /`);
    if (!VALUE.test(v)) throw new Error(`${what}: label "${k}" needs a value without spaces, commas or "="`);
    out[k] = v;
  }
  return out;
}

/** Checks a target given as an object (HTTP, MCP). */
export function checkTarget(target: unknown, what = 'target'): Labels {
  if (typeof target !== 'object' || target === null || Array.isArray(target)) throw new Error(`${what} must be an object of label: value`);
  const out: Labels = {};
  for (const [k, v] of Object.entries(target)) {
    if (!KEY.test(k)) throw new Error(`${what}: label name "${k}" may only hold letters, digits and _ . - /`);
    if (typeof v !== 'string' || !VALUE.test(v)) throw new Error(`${what}.${k} must be a string without spaces, commas or "="`);
    out[k] = v;
  }
  return out;
}

export function matches(labels: Labels, target: Labels): boolean {
  return Object.entries(target).every(([k, v]) => labels[k] === v);
}

export function formatLabels(l: Labels): string {
  const s = Object.entries(l)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return s === '' ? '(any worker)' : s;
}

/** What the backend probe says about this machine: the TensorRT backend knows GPU and version. */
export function probeLabels(backends: BackendInfo[]): Labels {
  const trt = backends.find((b) => b.name === 'tensorrt' && b.available);
  if (!trt) return {};
  const out: Labels = {};
  // Label values cannot hold spaces: "NVIDIA A100-SXM4-80GB" → "NVIDIA_A100-SXM4-80GB".
  if (trt.gpu?.name) out.gpu = trt.gpu.name.trim().replace(/[\s,=]+/g, '_');
  if (trt.gpu?.computeCapability) out.cc = trt.gpu.computeCapability;
  const version = trt.library?.version ?? trt.version;
  if (version) out.trt = version;
  return out;
}
