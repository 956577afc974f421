// Small text formatters shared by the CLI's commands and renderers.
import type { BackendName, Dim } from '../shared/protocol.js';

// Durations and sizes have one wording across every surface (apps/shared/format.ts).
export { formatBytes, formatDuration } from '../shared/format.js';

export function formatShape(shape: Dim[]): string {
  return `[${shape.join(', ')}]`;
}

/** The words every surface uses for the backend, so a simulated build is never mistaken for a real one. */
export function backendLabel(backend: BackendName | undefined, version: string | undefined): string {
  if (backend === 'simulated') return `simulated ${version ?? ''} — SIMULATED build, the output is not a TensorRT engine`.replace('  ', ' ');
  if (backend === 'tensorrt') return `TensorRT ${version ?? ''}`.trim();
  return 'unknown backend';
}
