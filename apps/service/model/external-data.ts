// Where a model's external data files are, checked by their real paths. The location text alone
// proves nothing: "w.bin" can be a symbolic link to /etc/passwd, or sit in a linked folder, and
// with TensorRT those bytes would become weights of an engine anyone can download. So the file
// (and every folder on the way) is resolved with realpath and must stay inside the real folder
// of the model. Absolute locations and ".." are refused outright, as the ONNX checker does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from '../api.js';

export interface ExternalFileUse {
  /** Bytes the model's tensors take from this file. */
  bytes: number;
  /** The first tensor stored there (named in errors). */
  tensor: string;
  /** Where the furthest-reaching tensor's data ends (offset + length), and that tensor. */
  end?: number;
  endTensor?: string;
}

function invalid(model: string, tensor: string, location: string, why: string): ServiceError {
  return new ServiceError('bad_model', `${model}: initializer "${tensor}" has an invalid external data location "${location}": ${why}`);
}

/**
 * Checks every external data location of `model` (an absolute path). Always: the location is a
 * relative path whose real path stays in the model's real folder. With `requireExist` (builds):
 * the file exists and is a regular file.
 */
export async function checkExternalFiles(model: string, files: ReadonlyMap<string, ExternalFileUse>, opts: { requireExist: boolean }): Promise<void> {
  if (files.size === 0) return;
  const dir = path.dirname(model);
  let realDir: string;
  try {
    realDir = await fs.promises.realpath(dir);
  } catch (e) {
    throw new ServiceError('bad_model', `${model}: cannot resolve the model's folder: ${(e as Error).message}`);
  }
  for (const [location, { tensor, end, endTensor }] of files) {
    if (!location) throw invalid(model, tensor, location, 'it is empty');
    if (location.includes('\0')) throw invalid(model, tensor, location, 'it contains a NUL byte');
    if (path.isAbsolute(location) || /^[a-zA-Z]:/.test(location)) throw invalid(model, tensor, location, "an absolute path; it must be relative to the model's folder");
    if (location.split(/[\\/]/).includes('..')) throw invalid(model, tensor, location, `it leaves the model's folder ("..")`);
    const p = path.join(dir, location);
    let real: string;
    try {
      real = await fs.promises.realpath(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP')
        throw new ServiceError('bad_model', `${model}: cannot resolve external data "${location}" (initializer "${tensor}"): ${(e as Error).message}`);
      if (code === 'ELOOP') throw invalid(model, tensor, location, 'a symbolic link loop');
      if (opts.requireExist) throw new ServiceError('bad_model', `${model}: external data file "${location}" (used by initializer "${tensor}") not found at ${p}`);
      continue;
    }
    const rel = path.relative(realDir, real);
    if (rel === '') throw invalid(model, tensor, location, "it names the model's folder, not a file");
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw invalid(model, tensor, location, `it resolves (through a symbolic link) to ${real}, outside the model's folder ${realDir}`);
    }
    const st = await fs.promises.stat(real);
    if (!st.isFile()) {
      if (opts.requireExist) throw new ServiceError('bad_model', `${model}: external data "${location}" (used by initializer "${tensor}") is not a regular file`);
      continue;
    }
    // The data must lie inside the file: an offset or length past its end is a broken (or
    // hostile) model, which TensorRT's parser would refuse, or read past, at build time.
    if (end !== undefined && end > st.size) {
      throw new ServiceError(
        'bad_model',
        `${model}: initializer "${endTensor ?? tensor}"'s external data ends at byte ${end} of "${location}", but that file has ${st.size} bytes`,
      );
    }
  }
}
