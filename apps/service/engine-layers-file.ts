// Finds and reads an engine's layer information from disk for `layers`, `compare`, the HTTP API,
// MCP and the LSP: an engine (its `<engine>.layers.json` beside it) or a layer JSON file itself,
// with an optional profile. Reads are bounded (size checked before reading, regular files only,
// opened non-blocking so a FIFO never hangs); the parsing and every answer are in
// apps/shared/engine-layers.ts.
import * as fs from 'node:fs';
import { LAYER_FILE_LIMITS, LayerFileError, readEngineLayers, type EngineLayers } from '../shared/engine-layers.js';
import { LAYERS_SUFFIX, layersPathFor } from '../shared/engine-manifest.js';
import { ServiceError } from './api.js';

/** Reads a regular file whole, refusing what is not one or is larger than the reader takes. */
export function readBoundedText(file: string, what: string, maxBytes = LAYER_FILE_LIMITS.maxChars): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ServiceError(code === 'ENOENT' ? 'not_found' : 'bad_input', `${what}: cannot open ${file} (${code ?? (e as Error).message})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ServiceError('bad_input', `${what}: ${file} is not a regular file`);
    if (st.size > maxBytes) throw new ServiceError('bad_input', `${what}: ${file} is ${st.size} bytes, more than the ${maxBytes} this reader takes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = fs.readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The layer JSON a path stands for: itself when it is JSON (a `.json` name, or text starting with
 * `{`), else the engine's `<path>.layers.json`.
 */
export function layerFileFor(p: string): string {
  if (p.endsWith('.json')) return p;
  const beside = layersPathFor(p);
  if (fs.existsSync(beside)) return beside;
  throw new ServiceError('not_found', `no layer information for ${p}: neither a layer JSON file (trtexec --exportLayerInfo) nor an engine with ${LAYERS_SUFFIX} beside it`);
}

/** Reads layer information (and a profile) from files; file errors are bad input naming the file. */
export function loadEngineLayers(layerPath: string, profilePath?: string): EngineLayers & { files: { layers: string; profile?: string } } {
  const layersFile = layerFileFor(layerPath);
  const text = readBoundedText(layersFile, 'layer information');
  const profile = profilePath !== undefined ? readBoundedText(profilePath, 'profile') : undefined;
  try {
    return { ...readEngineLayers(text, profile, { layers: layersFile, profile: profilePath }), files: { layers: layersFile, ...(profilePath ? { profile: profilePath } : {}) } };
  } catch (e) {
    if (e instanceof LayerFileError) throw new ServiceError('bad_input', e.message);
    throw e;
  }
}
