// `check`: does this engine still fit this machine, this model and these options? One
// implementation behind the CLI (`trt-build-studio check`), GET /api/engines/check, the MCP tool
// and the LSP command. It gathers the facts (the engine's bytes against its manifest, the model's
// digest now, the backend this machine would load the engine with) and hands them to the pure
// comparison in apps/shared/engine-manifest.ts, which names every reason with both values.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkAgainst, manifestPathFor, optionsFromManifest, verdictOf, type CheckResult, type UnknownReason } from '../shared/engine-manifest.js';
import { BuildOptions, describeZodError, type BackendInfo } from '../shared/protocol.js';
import { ServiceError } from './api.js';
import { modelDigest, readManifest, sha256File } from './engine-manifest-file.js';
import { inspectModel } from './model/model-reader.js';

export interface CheckEngineInput {
  enginePath: string;
  /** The model to compare with; default: the model the manifest names, when it is still there. */
  modelPath?: string;
  /** Build options to compare with (as for a build); absent: options are not compared. */
  options?: unknown;
}

function unknown(enginePath: string, missing: UnknownReason[]): CheckResult {
  return { verdict: 'unknown', engine: enginePath, manifest: manifestPathFor(enginePath), reasons: [], missing, notes: [] };
}

export async function checkEngine(input: CheckEngineInput, backends: () => Promise<BackendInfo[]>): Promise<CheckResult> {
  if (typeof input.enginePath !== 'string' || input.enginePath === '' || input.enginePath.includes('\0')) {
    throw new ServiceError('bad_input', 'engine is required: the path of an engine file');
  }
  const enginePath = path.resolve(input.enginePath);
  let options: BuildOptions | undefined;
  if (input.options !== undefined) {
    const parsed = BuildOptions.safeParse(input.options);
    if (!parsed.success) throw new ServiceError('bad_input', `invalid options: ${describeZodError(parsed.error)}`);
    options = parsed.data;
    // Paths as a build takes them (absolute), so that they compare with the manifest's.
    for (const what of ['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize'] as const) {
      if (options[what]) options[what] = options[what].map((p) => path.resolve(p));
    }
    if (options.pinnedCache) options.pinnedCache = path.resolve(options.pinnedCache);
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(enginePath);
  } catch {
    return unknown(enginePath, [{ kind: 'no-engine', message: `no engine at ${enginePath}` }]);
  }
  if (!st.isFile()) throw new ServiceError('bad_input', `${enginePath} is not a regular file`);
  const read = readManifest(enginePath);
  if (!read.ok) return unknown(enginePath, [{ kind: read.kind, message: read.message }]);
  const m = read.manifest;
  // The manifest speaks for the bytes it names and no others (a crash between the engine's and
  // the manifest's writes leaves an older manifest beside a newer engine).
  const sha = await sha256File(enginePath);
  const built = { buildId: m.buildId, modelPath: m.model.path, options: optionsFromManifest(m) };
  if (st.size !== m.engine.bytes || sha !== m.engine.sha256) {
    return unknown(enginePath, [
      {
        kind: 'manifest-mismatch',
        message: `the manifest describes another engine (${m.engine.bytes} bytes, sha256 ${m.engine.sha256.slice(0, 12)}…; this file: ${st.size} bytes, sha256 ${(sha ?? '').slice(0, 12)}…)`,
      },
    ]);
  }
  let model: { path: string; sha256: string } | undefined;
  if (input.modelPath !== undefined) {
    if (typeof input.modelPath !== 'string' || input.modelPath === '') throw new ServiceError('bad_input', 'model must be a path');
    const p = path.resolve(input.modelPath);
    // The same reader (and external-data checks) a build uses: what is hashed is what would be built.
    const summary = await inspectModel(p);
    model = { path: p, sha256: (await modelDigest(p, summary.externalData.files)).sha256 };
  } else if (fs.existsSync(m.model.path)) {
    try {
      model = { path: m.model.path, sha256: (await modelDigest(m.model.path, m.model.externalData)).sha256 };
    } catch {
      model = undefined; // an external data file went missing: said in the notes
    }
  }
  const pluginHashes: Record<string, string | null> = {};
  for (const p of m.pluginLibraries) pluginHashes[p.path] = await sha256File(p.path);
  const list = await backends();
  const backend = list.find((b) => b.name === m.backend);
  const env = { backend, driverVersion: backend?.cudaDriver?.driverVersion ?? null };
  const pinnedCacheSha256 = options?.pinnedCache ? await sha256File(options.pinnedCache) : undefined;
  const { reasons, missing, notes } = checkAgainst(m, env, { model, options, pluginHashes, pinnedCacheSha256 });
  return { verdict: verdictOf(reasons, missing), engine: enginePath, manifest: read.path, reasons, missing, notes, built };
}
