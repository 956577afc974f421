// How the CLI's commands and renderers write a shape and a backend. (Durations and sizes have
// one wording across every surface: apps/shared/format.ts.)
import type { BackendName, Dim } from '../shared/protocol.js';

/** "[1, 3, 224, 224]", "[]" for a scalar, "(no shape)" when the file declares none. */
export function formatShape(shape: Dim[], rankUnknown?: boolean): string {
  return rankUnknown ? '(no shape)' : `[${shape.join(', ')}]`;
}

/**
 * The words every surface uses for the backend, so a simulated build is never mistaken for a real
 * one. Before a worker has started the build (a farm build waiting for a machine) the backend is
 * not known yet: the label says what was asked and when it is decided; the renderers name the
 * backend once build.started brings it.
 */
export function backendLabel(backend: BackendName | undefined, version: string | undefined, asked?: string): string {
  if (backend === 'simulated') return `simulated ${version ?? ''} — SIMULATED build, the output is not a TensorRT engine`.replace('  ', ' ');
  if (backend === 'tensorrt') return `TensorRT ${version ?? ''}`.trim();
  return `backend ${asked ?? 'auto'} (decided when a worker starts the build)`;
}
