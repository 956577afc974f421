// What `compare` compares: a build, named by its engine, its manifest, or its build id. Build ids
// are looked up among the manifests of the folders engines go to (the service's default output
// folder, the reuse store, and any folder the caller adds), newest first. An engine counts only
// with a manifest that describes its bytes; layer information counts only when its sha256 is the
// one the manifest names (engine-manifest-file.ts says why).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { compareBuilds, type BuildComparison, type LayerRecord } from '../shared/build-compare.js';
import { EngineManifest, MANIFEST_SUFFIX } from '../shared/engine-manifest.js';
import { describeZodError } from '../shared/protocol.js';
import { ServiceError } from './api.js';
import { readManifest, sha256File } from './engine-manifest-file.js';
import { readLayerInfo } from './layer-info.js';

export interface Comparable {
  manifest: EngineManifest;
  manifestPath: string;
  layers?: LayerRecord[];
}

function parseManifestFile(file: string): EngineManifest {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ServiceError('bad_input', `${file}: ${(e as Error).message}`);
  }
  const r = EngineManifest.safeParse(json);
  if (!r.success) throw new ServiceError('bad_input', `${file} is not a valid manifest: ${describeZodError(r.error)}`);
  return r.data;
}

/** Manifests in `dirs` (one level, and the reuse store's entry folders), newest first. */
function manifestsIn(dirs: readonly string[]): string[] {
  const found: Array<{ file: string; mtimeMs: number }> = [];
  const add = (file: string) => {
    try {
      found.push({ file, mtimeMs: fs.statSync(file).mtimeMs });
    } catch {
      // Gone meanwhile.
    }
  };
  for (const dir of dirs) {
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of names) {
      if (e.isFile() && e.name.endsWith(MANIFEST_SUFFIX)) add(path.join(dir, e.name));
      else if (e.isDirectory() && /^[0-9a-f]{64}$/.test(e.name)) add(path.join(dir, e.name, 'manifest.json'));
    }
  }
  return found.sort((a, b) => b.mtimeMs - a.mtimeMs).map((f) => f.file);
}

async function layersBeside(manifestPath: string, m: EngineManifest): Promise<LayerRecord[] | undefined> {
  if (!m.layerInfo) return undefined;
  const file = path.join(path.dirname(manifestPath), m.layerInfo.file);
  if ((await sha256File(file)) !== m.layerInfo.sha256) return undefined;
  return readLayerInfo(file);
}

/** Resolves one argument of `compare`: a manifest file, an engine file, or a build id. */
export async function loadComparable(arg: string, searchDirs: readonly string[]): Promise<Comparable> {
  if (!arg) throw new ServiceError('bad_input', 'compare takes two builds: engines, manifests or build ids');
  const p = path.resolve(arg);
  let manifestPath: string | undefined;
  let manifest: EngineManifest | undefined;
  if (fs.existsSync(p) && fs.statSync(p).isFile()) {
    if (p.endsWith('.json')) {
      manifestPath = p;
      manifest = parseManifestFile(p);
    } else {
      const read = readManifest(p);
      if (!read.ok) throw new ServiceError('bad_input', `${p}: ${read.message}`);
      const sha = await sha256File(p);
      if (sha !== read.manifest.engine.sha256) throw new ServiceError('bad_input', `${p}: its manifest describes other bytes (written by another build); nothing to compare`);
      manifestPath = read.path;
      manifest = read.manifest;
    }
  } else {
    for (const file of manifestsIn(searchDirs)) {
      try {
        const m = parseManifestFile(file);
        if (m.buildId === arg) {
          manifestPath = file;
          manifest = m;
          break;
        }
      } catch {
        // Not a manifest of ours: skip it.
      }
    }
    if (!manifest || !manifestPath) {
      throw new ServiceError('not_found', `"${arg}" is neither a file nor the id of a build whose manifest is in ${searchDirs.join(', ') || '(no folder)'}`);
    }
  }
  return { manifest, manifestPath, layers: await layersBeside(manifestPath, manifest) };
}

export async function compareSources(a: string, b: string, searchDirs: readonly string[]): Promise<BuildComparison & { manifests: [string, string] }> {
  const [ca, cb] = [await loadComparable(a, searchDirs), await loadComparable(b, searchDirs)];
  return { ...compareBuilds(ca.manifest, cb.manifest, { a: ca.layers, b: cb.layers }), manifests: [ca.manifestPath, cb.manifestPath] };
}
