// The file name an engine gets when nobody names one: `<model>.<gpu or "sim">.<TensorRT version>.engine`.
// Shared by the service (which writes engines under it) and the "Copy as trtexec command" (whose
// --saveEngine must name the same file), so the two can never drift apart. Pure: no Node imports.
import type { BackendInfo } from './protocol.js';

/** A name part safe in any file system: no separators, controls or shell-hostile characters. */
export function engineNamePart(s: string): string {
  return s.replace(/[^\p{L}\p{N}._+ -]+/gu, '-').replace(/\s+/g, ' ').replace(/^[-. ]+|[-. ]+$/g, '') || 'x';
}

/**
 * `<model>.<gpu or "sim">.<TensorRT version>` for a model known by `baseName` (a file name without
 * its folder), built on `backend`. The simulator's output says "sim": it is not an engine to deploy.
 * Without `suffix` the ".engine" name; with it, `-<suffix>` goes before ".engine" (a name taken).
 */
export function engineFileName(baseName: string, backend: BackendInfo, suffix?: string): string {
  const stem = engineNamePart(baseName.replace(/\.onnx$/i, ''));
  const device = backend.name === 'simulated' ? 'sim' : engineNamePart((backend.gpu?.name ?? 'gpu').replace(/^NVIDIA\s+/i, '')).replace(/ /g, '-');
  const version = engineNamePart(backend.name === 'simulated' ? (backend.emulates ?? backend.version ?? 'unknown') : (backend.library?.version ?? backend.version ?? 'unknown'));
  return `${stem}.${device}.${version}${suffix !== undefined ? `-${engineNamePart(suffix)}` : ''}.engine`;
}
