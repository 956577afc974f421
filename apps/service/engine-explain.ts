// One answer to "what did TensorRT build?" for the HTTP API (GET /api/builds/{id}/layers), the MCP
// tool explain_engine and the LSP command trtBuildStudio.explainEngine (issue 36 item 5): a build's
// saved layer JSON, or a file given by path, read by apps/shared/engine-layers.ts, with the
// precision check of apps/shared/build-layers.ts.
import { expectedPrecision } from '../shared/build-layers.js';
import { checkPrecision, precisionCheckText, type EngineLayers, type LayerPrecision, type PrecisionCheck } from '../shared/engine-layers.js';
import { layersPathFor } from '../shared/engine-manifest.js';
import { trtCapabilities } from '../shared/trt-capabilities.js';
import { ServiceError, type BuildServiceApi } from './api.js';
import { loadEngineLayers } from './engine-layers-file.js';

export type LayerReport = EngineLayers & { files: { layers: string; profile?: string }; check?: PrecisionCheck };

/**
 * The layer information of a build of this service, with the precision check against what the
 * build asked for (its options and model; strongly typed on TensorRT 11). not_found when the build
 * is unknown, has no engine, or its engine has no layer JSON beside it.
 */
export function buildLayerReport(service: Pick<BuildServiceApi, 'getBuild' | 'enginePath'>, id: string, profilePath?: string): LayerReport {
  const record = service.getBuild(id);
  if (!record) throw new ServiceError('not_found', `unknown build "${id}"`);
  const engine = record.state === 'succeeded' ? service.enginePath(record.id) : undefined;
  if (!engine) throw new ServiceError('not_found', `build ${record.id} has no engine (it is ${record.state}), so no layer information`);
  let read: LayerReport;
  try {
    read = loadEngineLayers(layersPathFor(engine), profilePath);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'not_found' && !(profilePath && e.message.includes(profilePath))) {
      throw new ServiceError('not_found', `build ${record.id} has no layer information (TensorRT could not give it, or it was removed): ${e.message}`);
    }
    throw e;
  }
  const implied = record.backendVersion !== undefined && trtCapabilities(record.backendVersion).stronglyTypedImplied;
  const expected = expectedPrecision(record.options, record.model, implied);
  return expected ? { ...read, check: checkPrecision(read.layers, expected) } : read;
}

/** Layer information read from a path (an engine with its `.layers.json`, or a layer JSON file). */
export function fileLayerReport(layerPath: string, profilePath?: string, expected?: LayerPrecision): LayerReport {
  const read = loadEngineLayers(layerPath, profilePath);
  return expected ? { ...read, check: checkPrecision(read.layers, expected) } : read;
}

export interface EngineExplanation {
  files: { layers: string; profile?: string };
  schema: EngineLayers['schema'];
  detailed: boolean;
  summary: EngineLayers['summary'];
  io: EngineLayers['io'];
  check?: PrecisionCheck & { text: string };
  /** The slowest layers with what they are (a profile is needed for times; else empty). */
  slowest: Array<{ name: string; type?: string; precision?: string; tactic?: string; timeMs: number; percent?: number; fused?: string[] }>;
  /** The same facts as a few lines a person (or a model) reads. */
  text: string;
}

/** The summary, the precision check and the slowest layers: what MCP and the LSP answer. */
export function explainLayers(r: LayerReport, slowestAtMost = 10): EngineExplanation {
  const byName = new Map(r.layers.map((l) => [l.name, l]));
  const slowest = r.summary.slowest.slice(0, slowestAtMost).map((s) => {
    const l = byName.get(s.name);
    return {
      name: s.name,
      ...(l?.type !== undefined ? { type: l.type } : {}),
      ...(l?.precision !== undefined ? { precision: l.precision } : {}),
      ...(l?.tactic !== undefined ? { tactic: l.tactic } : {}),
      timeMs: s.timeMs,
      ...(s.percent !== undefined ? { percent: s.percent } : {}),
      ...(l?.fused?.length ? { fused: l.fused } : {}),
    };
  });
  const s = r.summary;
  const per = Object.entries(s.byPrecision)
    .sort((a, b) => b[1] - a[1])
    .map(([p, n]) => `${p} ${n}`)
    .join(', ');
  const lines = [
    `${s.count} layers${per ? ` (${per})` : ''}, TensorRT ${r.schema} layer information${r.detailed ? '' : ' (names only: build with detailed profiling verbosity for types and precisions)'}`,
  ];
  const check = r.check ? { ...r.check, text: precisionCheckText(r.check, 20) } : undefined;
  if (check) lines.push(`Precision: ${check.text}`);
  if (s.totalMs !== undefined) {
    lines.push(`Profiled: ${s.totalMs.toFixed(3)} ms in all; slowest:`);
    for (const l of slowest)
      lines.push(
        `  ${l.timeMs.toFixed(4)} ms${l.percent !== undefined ? ` (${l.percent.toFixed(1)}%)` : ''}  ${l.name}${l.type ? ` [${l.type}${l.precision ? `, ${l.precision}` : ''}]` : ''}`,
      );
  } else {
    lines.push('No per-layer times: give a profile (trtexec --exportProfile) to see the slowest layers.');
  }
  return { files: r.files, schema: r.schema, detailed: r.detailed, summary: s, io: r.io, ...(check ? { check } : {}), slowest, text: lines.join('\n') };
}
