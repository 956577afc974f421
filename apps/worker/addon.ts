// The native addon's JS face (NativeAddonApi): loads build/native/Release/trt_build_studio.node,
// turns BuildOptions into the flat native request, and turns the native batches (one
// Float64Array of fixed-width records + a string table) into protocol.ts event objects.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { BUILD_OPTIONS, type OptionEntry } from '../shared/build-options.js';
import {
  PROTOCOL_VERSION,
  type BackendInfo,
  type BuildEvent,
  type BuildFinished,
  type BuildOptions,
  type CacheStats,
  type CancelReason,
  type PhaseNode,
  type Severity,
} from '../shared/protocol.js';
import { EventLine, type WireEvent } from '../shared/event-lines.js';
import { PACING_BUDGET_MS } from '../shared/pacing-batcher.js';
import type { GpuProbeOpen, NativeAddonApi, NativeBackPressure, NativeBuildHandle, NativeBuildRequest } from './native-api.js';

/** The raw module as addon.cc exports it. */
interface RawAddon {
  /** Probes off the JS thread (a libuv worker): loading TensorRT and CUDA can take seconds. */
  listBackends(): Promise<BackendInfo[]>;
  /** getAllBuildRoutes() JSON of the TensorRT library, read off the JS thread and kept on disk. */
  readBuildRoutes?(): Promise<string>;
  /** With `linePrefix` the addon also hands each batch's hot events over as JSON lines (events are `lines`' 5th argument). */
  startBuild(request: Record<string, unknown>, onBatch: RawBatchListener, linePrefix?: string): RawHandle;
  openGpuProbe(device: number, periodMs?: number): GpuProbeOpen;
  /**
   * Parses a request exactly as startBuild does and returns the build options it read, in its
   * keys and units; starts nothing. For the options-table test (test/contract/option-table.test.ts).
   * Absent from addons built before it.
   */
  echoBuildRequest?(request: Record<string, unknown>): Record<string, unknown>;
  redirectStderrToFile(path: string): void;
  abiVersion: number;
  /** The batch layout the addon was built with (native/src/core/events.h). */
  eventLayout?: EventLayout;
  /** The fields of the request it reads (native/src/core/request_fields.def); absent from addons built before the list. */
  requestFields?: RequestField[];
}

/** One field of the native request, as the addon lists it (native/src/core/request_fields.def). */
export interface RequestField {
  /** The key of the flat request (toNativeRequest) and the C++ member. */
  key: string;
  /** The JS value the addon reads: 'ranges' = {name: {min, opt, max}}, 'layers' = [{name, op}]. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'string[]' | 'ranges' | 'layers';
  /** The C++ type of the member ("int32_t", "std::string", ...). */
  cxx: string;
  /** The unit of a number ('bytes', 'ms'), '' for none. */
  unit: string;
  /** 'option': an options-table entry's native key; 'worker': set by toNativeRequest itself. */
  origin: 'option' | 'worker';
  /**
   * The TensorRT releases whose builder has the setting (from native/trt-facts.json): `since` the
   * first, `before` the one that removed it; {} every supported release; null none (a setting of
   * the simulated backend or the host).
   */
  tensorrt: { since?: string; before?: string } | null;
  /** The least value a backend accepts besides "not set". */
  min?: number;
}

/** How one batch packs events into the Float64Array, as the addon reports it. */
export interface EventLayout {
  slots: number;
  fields: string[];
  types: Record<string, number>;
}
/**
 * `lines` (only when startBuild was given a line prefix): one line per event, joined by "\n",
 * the JSON text of each phase.start, phase.step and phase.finish (native/src/core/event_lines.h)
 * and empty for the others. Addons built before it never pass it.
 */
/**
 * `nums` is a view of one buffer the addon reuses for every batch (native/src/addon/build_job.cc
 * batchNumbers): valid until the listener returns, overwritten by the next batch. Decode it within
 * the call (BatchDecoder does); keep a copy (nums.slice()) to hold on to the numbers.
 */
type RawBatchListener = (nums: Float64Array, strs: string[], newNames: string[], firstNameId: number, lines?: string) => void;
interface RawHandle {
  cancel(reason?: string): boolean;
  snapshot(): PhaseNode[];
  /** Addons built before back-pressure lack it. */
  hold?(on: boolean): void;
  backPressure?(): NativeBackPressure;
}

// The layout BatchDecoder reads. The addon exports the one it writes (events.h) and loadNative()
// refuses an addon whose layout differs (checkEventLayout), so a rebuilt addon with a new event
// type or slot order fails at load with a clear message instead of decoding garbage.
const SLOTS = 8;
const FIELDS = ['type', 'seq', 't', 'a', 'b', 'c', 'd', 'e'];
const EV = { started: 0, phaseStart: 1, phaseStep: 2, phaseFinish: 3, log: 4, cacheStats: 5, heartbeat: 6, cancelling: 7, finished: 8 } as const;

/** Throws, naming every difference, unless `layout` is the one this decoder reads. */
export function checkEventLayout(layout: EventLayout | undefined, file = 'the native addon'): void {
  if (!layout || typeof layout !== 'object') {
    throw new Error(`${file} does not export eventLayout: it predates this version of addon.ts; run "npm run build:native"`);
  }
  const diffs: string[] = [];
  if (layout.slots !== SLOTS) diffs.push(`slots per event: addon ${layout.slots}, addon.ts ${SLOTS}`);
  if (JSON.stringify(layout.fields) !== JSON.stringify(FIELDS)) diffs.push(`slot order: addon [${layout.fields}], addon.ts [${FIELDS}]`);
  const names = new Set([...Object.keys(layout.types ?? {}), ...Object.keys(EV)]);
  for (const name of names) {
    const mine = (EV as Record<string, number>)[name];
    const theirs = layout.types?.[name];
    if (mine !== theirs) diffs.push(`event type "${name}": addon ${theirs ?? 'absent'}, addon.ts ${mine ?? 'absent'}`);
  }
  if (diffs.length > 0) {
    throw new Error(`${file} packs events differently from apps/worker/addon.ts (rebuild both: npm run build): ${diffs.join('; ')}`);
  }
}
const SEVERITIES: Severity[] = ['internal_error', 'error', 'warning', 'info', 'verbose'];
// Indexed by the native CancelReason (native/src/core/backend.h).
const CANCEL_REASONS: CancelReason[] = ['user', 'timeout', 'shutdown', 'memory'];
const STATUSES = ['succeeded', 'cancelled', 'failed'] as const;

const PACKAGE_NAME = 'trt-build-studio';
const ADDON_RELATIVE = path.join('build', 'native', 'Release', 'trt_build_studio.node');

/** The package root, found by walking up from this file (works from apps/worker and dist/apps/worker). */
function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root above ${__dirname}`);
    dir = parent;
  }
}

/** Where the .node file is: TBS_ADDON_PATH, else <package root>/build/native/Release/. */
export function addonPath(): string {
  const override = process.env.TBS_ADDON_PATH;
  return override ? path.resolve(override) : path.join(packageRoot(), ADDON_RELATIVE);
}

let raw: RawAddon | undefined;

/** Loads the native module once; a missing build is a clear error naming the command to run. */
export function loadNative(): RawAddon {
  if (raw) return raw;
  const file = addonPath();
  if (!existsSync(file)) {
    throw new Error(`native addon not found at ${file}: run "npm run build:native" (or set TBS_ADDON_PATH)`);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(file) as RawAddon;
  checkEventLayout(mod.eventLayout, file);
  checkRequestFields(mod.requestFields, BUILD_OPTIONS, file);
  raw = mod;
  return raw;
}

/**
 * One build option in the native request's keys and units (the table's `native` entry): a
 * renamed key, a unit conversion (MiB → bytes, s → ms), or a value split over several keys.
 */
export function nativeOptionFields(entry: OptionEntry, value: unknown): Record<string, unknown> {
  const n = entry.native;
  if ('none' in n) return {};
  if ('keys' in n) return value === undefined ? Object.fromEntries(n.keys.map((k) => [k, undefined])) : n.toNative(value as never);
  if (value === undefined) return { [n.key]: undefined };
  if (n.toNative) return { [n.key]: n.toNative(value as never) };
  return { [n.key]: n.scale !== undefined ? (value as number) * n.scale : value };
}

/** How a table unit converts to a native one (the entry's `native.scale` must be this factor). */
const UNIT_FACTORS: Record<string, number> = { 'MiB>bytes': 1024 * 1024, 'KiB>bytes': 1024, 's>ms': 1000 };

function hasType(type: string, v: unknown): boolean {
  const ints = (a: unknown) => Array.isArray(a) && a.every((x) => Number.isInteger(x));
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'ranges':
      return (
        typeof v === 'object' &&
        v !== null &&
        !Array.isArray(v) &&
        Object.values(v).every((r: { min?: unknown; opt?: unknown; max?: unknown }) => typeof r === 'object' && r !== null && ints(r.min) && ints(r.opt) && ints(r.max))
      );
    default:
      return false;
  }
}

/**
 * Throws, naming every difference, unless the options table's native keys and the addon's request
 * fields agree: each key an entry sends is an 'option' field of the addon, of the type the entry's
 * sample becomes (toNativeRequest's conversion included) and in the unit its `scale` converts to,
 * with no lower bound the table's range lets a value under; and each 'option' field is some entry's
 * key. So a field added on one side only fails when the addon loads, not as a value silently
 * ignored (the C++ reader skips keys it does not know) or a key never sent.
 */
export function checkRequestFields(fields: readonly RequestField[] | undefined, table: readonly OptionEntry[] = BUILD_OPTIONS, file = 'the native addon'): void {
  if (!Array.isArray(fields)) {
    throw new Error(`${file} does not export requestFields: it predates this version of addon.ts; run "npm run build:native"`);
  }
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const sent = new Set<string>();
  const diffs: string[] = [];
  for (const entry of table) {
    const n = entry.native;
    if ('none' in n) continue;
    const values = nativeOptionFields(entry, entry.sample);
    for (const key of 'keys' in n ? n.keys : [n.key]) {
      sent.add(key);
      const f = byKey.get(key);
      if (!f) {
        diffs.push(`option ${entry.field} sends "${key}", which the addon does not read`);
        continue;
      }
      if (f.origin !== 'option') diffs.push(`option ${entry.field} sends "${key}", which the addon lists as set by the worker, not the table`);
      const value = values[key];
      if (value !== undefined && !hasType(f.type, value)) {
        diffs.push(`"${key}": the addon reads ${f.type} (${f.cxx}), option ${entry.field} sends ${JSON.stringify(value)}`);
      }
      if ('key' in n) {
        const unit = entry.unit ?? (entry.range?.kind === 'bytes' ? 'bytes' : '');
        const factor = unit === f.unit ? 1 : UNIT_FACTORS[`${unit}>${f.unit}`];
        if (factor === undefined || factor !== (n.scale ?? 1)) {
          diffs.push(`"${key}": the addon reads ${f.unit || 'no unit'}, option ${entry.field} sends ${unit || 'no unit'} times ${n.scale ?? 1}`);
        }
        if (f.min !== undefined && entry.range?.kind === 'int' && entry.range.min * (n.scale ?? 1) < f.min) {
          diffs.push(`"${key}": the addon refuses values below ${f.min}, option ${entry.field} allows ${entry.range.min}`);
        }
      }
    }
  }
  for (const f of fields) {
    if (f.origin === 'option' && !sent.has(f.key)) diffs.push(`the addon reads "${f.key}" as an option, but no entry of the options table sends it`);
  }
  if (diffs.length > 0) {
    throw new Error(
      `${file} reads build options differently from the options table (apps/shared/build-options.ts; native/src/core/request_fields.def; rebuild the addon with npm run build:native if it is older): ${diffs.join('; ')}`,
    );
  }
}

/**
 * maxGpuMemory caps the TensorRT memory pools it can: the workspace and the tactic DRAM pool
 * (IBuilderConfig::setMemoryPoolLimit) take the smaller of their own limit and it. What TensorRT
 * allocates outside the pools (weights, the engine being built) is watched through NVML instead.
 */
function capByGpuLimit(poolBytes: number | undefined, maxGpuMemory: number | undefined): number | undefined {
  if (maxGpuMemory === undefined) return poolBytes;
  return poolBytes === undefined ? maxGpuMemory : Math.min(poolBytes, maxGpuMemory);
}

/** BuildOptions (user units) -> the flat request native/src/addon/request_from_js.cc reads. */
export function toNativeRequest(req: NativeBuildRequest): Record<string, unknown> {
  const o: BuildOptions = req.options;
  const options: Record<string, unknown> = {};
  for (const entry of BUILD_OPTIONS) Object.assign(options, nativeOptionFields(entry, o[entry.field as keyof BuildOptions]));
  if (o.maxGpuMemory !== undefined) {
    options.workspaceBytes = capByGpuLimit(options.workspaceBytes as number | undefined, o.maxGpuMemory);
    options.tacticDramBytes = capByGpuLimit(options.tacticDramBytes as number | undefined, o.maxGpuMemory);
  }
  return {
    buildId: req.buildId,
    backend: req.backend,
    modelPath: req.modelPath,
    outputPath: req.outputPath,
    layers: req.layers.map((l) => ({ name: l.name, op: l.op })),
    ...options,
    simThreads: req.simThreads,
    simHangMs: req.simHangMs,
    heartbeatMs: req.heartbeatMs,
    crashRecordPath: req.crashRecordPath,
    // The native flusher paces by the same budget as every JS hop (one budget, paid once).
    flushIntervalMs: PACING_BUDGET_MS,
  };
}

/** Decodes native batches of one build into protocol events; keeps the build's name table. */
export class BatchDecoder {
  private readonly names: string[] = [];

  constructor(
    private readonly buildId: string,
    private readonly startedExtra: Record<string, unknown>,
  ) {}

  /**
   * The JSON text `{"v":..,"buildId":..` that every event's line starts with (the addon writes
   * the rest of a hot event's line after it): the object decode() makes begins with the same
   * two keys, so the lines are what JSON.stringify writes for those objects.
   */
  linePrefix(): string {
    return `{"v":${PROTOCOL_VERSION},"buildId":${JSON.stringify(this.buildId)}`;
  }

  /**
   * The worker's wire form of a batch: the hot events as the addon's JSON lines (EventLine: no
   * object, no JSON.stringify), the rest decoded into objects as decode() does. Without `lines`
   * (an addon built before them) every event is decoded.
   */
  decodeWire(nums: Float64Array, strs: string[], newNames: string[], firstNameId: number, lines: string | undefined): WireEvent[] {
    if (lines === undefined) return this.decode(nums, strs, newNames, firstNameId);
    const text = lines.split('\n');
    const count = nums.length / SLOTS;
    if (text.length !== count) throw new Error(`native addon sent ${text.length} event lines for ${count} events (addon and addon.ts out of sync?)`);
    // The names first: decode() below reads the table, and later batches without lines need it.
    for (let i = 0; i < newNames.length; i++) this.names[firstNameId + i] = newNames[i];
    const out = new Array<WireEvent>(count);
    for (let i = 0, p = 0; i < count; i++, p += SLOTS) {
      const type = nums[p];
      if (type === EV.phaseStep) out[i] = new EventLine('phase.step', nums[p + 3], text[i]);
      else if (type === EV.phaseStart) out[i] = new EventLine('phase.start', nums[p + 3], text[i]);
      else if (type === EV.phaseFinish) out[i] = new EventLine('phase.finish', nums[p + 3], text[i]);
      // The rare events: one at a time through decode() (a view of the same slots, no copy).
      else out[i] = this.decode(nums.subarray(p, p + SLOTS), strs, [], 0)[0];
    }
    return out;
  }

  decode(nums: Float64Array, strs: string[], newNames: string[], firstNameId: number): BuildEvent[] {
    for (let i = 0; i < newNames.length; i++) this.names[firstNameId + i] = newNames[i];
    const out: BuildEvent[] = [];
    const v = PROTOCOL_VERSION;
    const buildId = this.buildId;
    // Object literals written out per type (no spreads): this loop runs for every event.
    for (let p = 0; p < nums.length; p += SLOTS) {
      const type = nums[p];
      const seq = nums[p + 1];
      const t = nums[p + 2];
      const a = nums[p + 3];
      const b = nums[p + 4];
      const c = nums[p + 5];
      switch (type) {
        case EV.phaseStart:
          out.push({ v, buildId, seq, t, type: 'phase.start', id: a, parentId: b < 0 ? null : b, name: this.names[c] ?? `#${c}`, nbSteps: nums[p + 6], instance: nums[p + 7] });
          break;
        case EV.phaseStep:
          out.push({ v, buildId, seq, t, type: 'phase.step', id: a, step: b, stepsDone: c });
          break;
        case EV.phaseFinish:
          out.push({ v, buildId, seq, t, type: 'phase.finish', id: a, stepsDone: b, early: c === 1 });
          break;
        case EV.log:
          out.push({ v, buildId, seq, t, type: 'log', severity: SEVERITIES[a] ?? 'info', message: strs[nums[p + 7]] });
          break;
        case EV.heartbeat:
          out.push({ v, buildId, seq, t, type: 'heartbeat', sinceLastCallbackMs: b, cancelRequested: a === 1 });
          break;
        case EV.cancelling:
          out.push({ v, buildId, seq, t, type: 'build.cancelling', requestedAt: b, reason: CANCEL_REASONS[a] ?? 'user' });
          break;
        case EV.cacheStats:
          out.push({ v, buildId, seq, t, type: 'cache.stats', ...(JSON.parse(strs[nums[p + 7]]) as CacheStats) });
          break;
        case EV.started: {
          const s = JSON.parse(strs[nums[p + 7]]) as { backend: 'tensorrt' | 'simulated'; backendVersion: string; simulated: boolean; gpu: string | null; startedAtMs?: number };
          out.push({ v, buildId, seq, t, type: 'build.started', ...s, ...this.startedExtra });
          break;
        }
        case EV.finished: {
          const f = JSON.parse(strs[nums[p + 7]]) as Omit<BuildFinished, 'v' | 'buildId' | 'seq' | 't' | 'type' | 'status'>;
          out.push({ v, buildId, seq, t, type: 'build.finished', status: STATUSES[a] ?? 'failed', ...f });
          break;
        }
        default:
          throw new Error(`native addon sent an unknown event type ${type} (addon and addon.ts out of sync?)`);
      }
    }
    return out;
  }
}

export async function listBackends(): Promise<BackendInfo[]> {
  return loadNative().listBackends();
}

export function startBuild(request: NativeBuildRequest, onEvents: (events: BuildEvent[]) => void): NativeBuildHandle {
  // Without lines every event is an object (decode()).
  return start(request, false, onEvents as (events: WireEvent[]) => void);
}

/**
 * startBuild in the build worker's wire form: the hot events arrive as their JSON text
 * (EventLine, written by the addon), the rest as objects; `result` is build.finished as an object.
 */
export function startWireBuild(request: NativeBuildRequest, onEvents: (events: WireEvent[]) => void): NativeBuildHandle {
  return start(request, true, onEvents);
}

function start(request: NativeBuildRequest, wire: boolean, onEvents: (events: WireEvent[]) => void): NativeBuildHandle {
  const native = loadNative();
  const startedExtra: Record<string, unknown> = { outputPath: request.outputPath, options: request.options };
  if (request.model) startedExtra.model = request.model;
  const decoder = new BatchDecoder(request.buildId, startedExtra);
  let resolveResult!: (f: BuildFinished) => void;
  const result = new Promise<BuildFinished>((resolve) => (resolveResult = resolve));
  const onBatch: RawBatchListener = (nums, strs, newNames, firstNameId, lines) => {
    const events = wire ? decoder.decodeWire(nums, strs, newNames, firstNameId, lines) : decoder.decode(nums, strs, newNames, firstNameId);
    const last = events[events.length - 1];
    try {
      onEvents(events);
    } finally {
      // The result resolves even if the listener throws (its error still surfaces).
      if (last !== undefined && !(last instanceof EventLine) && last.type === 'build.finished') resolveResult(last);
    }
  };
  const handle = wire ? native.startBuild(toNativeRequest(request), onBatch, decoder.linePrefix()) : native.startBuild(toNativeRequest(request), onBatch);
  return {
    buildId: request.buildId,
    cancel: (reason: CancelReason = 'user') => {
      handle.cancel(reason);
    },
    snapshot: () => handle.snapshot(),
    ...(typeof handle.hold === 'function' ? { hold: (on: boolean) => handle.hold!(on) } : {}),
    ...(typeof handle.backPressure === 'function' ? { backPressure: () => handle.backPressure!() } : {}),
    result,
  };
}

/**
 * NVML's view of CUDA device `device`, for the heartbeats. Opening is synchronous (it starts the
 * CUDA driver if the build has not yet, cuInit, and takes the first sample); after that a thread
 * of the probe's own samples NVML every `periodMs` (default 500) and sample() only reads the
 * latest figure, so a heartbeat never waits for NVML (up to 9.6 ms a sample measured on an H100).
 */
export function openGpuProbe(device: number, periodMs?: number): GpuProbeOpen {
  return periodMs === undefined ? loadNative().openGpuProbe(device) : loadNative().openGpuProbe(device, periodMs);
}

/** The same functions as one object, for callers that want the interface. */
/** See NativeAddonApi.readBuildRoutes; rejects when the addon predates it. */
export async function readBuildRoutes(): Promise<string> {
  const native = loadNative();
  if (typeof native.readBuildRoutes !== 'function') throw new Error('this build of the addon cannot read build routes (rebuild it: npm run build:native)');
  return native.readBuildRoutes();
}

export function redirectStderrToFile(file: string): void {
  loadNative().redirectStderrToFile(file);
}

export const addon: NativeAddonApi = { listBackends, startBuild, startWireBuild, openGpuProbe, redirectStderrToFile, readBuildRoutes };
export default addon;
