// Real third-party ONNX models for the model-check tests (issue 34), used when present, never
// downloaded by a test. Found, in this order:
// - TBS_REAL_MODELS_DIR: a folder holding any of the files named below (e.g. unpacked by hand);
// - the npm packages that ship them, when installed as devDependencies:
//   @imgly/background-removal-data (ISNet background removal, "medium" is the 88 MB float16
//   model whose Cast nodes come after the nodes that read them; shipped in 4 MiB chunks listed in
//   dist/resources.json, joined here into a temp file) and @ricky0123/vad-web (Silero VAD v5:
//   inputs with unnamed dynamic dimensions; legacy: a batch dimension and If bodies).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../../test/support/cli.js';

export interface RealModel {
  file: string;
  /** What makes it a case for the check. */
  why: string;
}

const NODE_MODULES = path.join(REPO_ROOT, 'node_modules');

/** The chunked ISNet model of @imgly/background-removal-data, joined into `into` (once). */
function isnetFromPackage(into: string): string | undefined {
  const index = path.join(NODE_MODULES, '@imgly', 'background-removal-data', 'dist', 'resources.json');
  if (!fs.existsSync(index)) return undefined;
  const entry = (JSON.parse(fs.readFileSync(index, 'utf8')) as Record<string, { chunks: Array<{ hash: string }> }>)['/models/medium'];
  if (!entry) return undefined;
  const out = path.join(into, 'isnet_medium.onnx');
  if (!fs.existsSync(out)) {
    const tmp = `${out}.tmp-${process.pid}`;
    const fd = fs.openSync(tmp, 'w');
    try {
      for (const c of entry.chunks) fs.writeSync(fd, fs.readFileSync(path.join(path.dirname(index), c.hash)));
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, out);
  }
  return out;
}

function first(...candidates: Array<string | undefined>): string | undefined {
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}

/** The real models found (keyed by role), joined into `tmpDir` where they come in pieces. */
export function findRealModels(tmpDir: string): { isnet?: RealModel; sileroV5?: RealModel; sileroLegacy?: RealModel } {
  const dir = process.env.TBS_REAL_MODELS_DIR;
  const inDir = (name: string) => (dir ? path.join(dir, name) : undefined);
  const vad = (name: string) => path.join(NODE_MODULES, '@ricky0123', 'vad-web', 'dist', name);
  const isnet = first(inDir('isnet_medium.onnx')) ?? isnetFromPackage(tmpDir);
  const v5 = first(inDir('silero_vad_v5.onnx'), vad('silero_vad_v5.onnx'));
  const legacy = first(inDir('silero_vad_legacy.onnx'), vad('silero_vad_legacy.onnx'));
  return {
    ...(isnet ? { isnet: { file: isnet, why: 'ISNet float16: Cast nodes appended after the nodes that read them' } } : {}),
    ...(v5 ? { sileroV5: { file: v5, why: 'Silero VAD v5: dynamic dimensions with no names, no shapes given' } } : {}),
    ...(legacy ? { sileroLegacy: { file: legacy, why: 'Silero VAD legacy: a dynamic batch and If bodies reading the outer graph' } } : {}),
  };
}
