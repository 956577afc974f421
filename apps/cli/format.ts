// Small text formatters shared by the CLI's commands and renderers.
import type { BackendName, Dim } from '../shared/protocol.js';

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.floor(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = -1;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

export function formatShape(shape: Dim[]): string {
  return `[${shape.join(', ')}]`;
}

/** The words every surface uses for the backend, so a simulated build is never mistaken for a real one. */
export function backendLabel(backend: BackendName | undefined, version: string | undefined): string {
  if (backend === 'simulated') return `simulated ${version ?? ''} — SIMULATED build, the output is not a TensorRT engine`.replace('  ', ' ');
  if (backend === 'tensorrt') return `TensorRT ${version ?? ''}`.trim();
  return 'unknown backend';
}
