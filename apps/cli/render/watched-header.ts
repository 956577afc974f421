// The header line that says what is being built: the model and the engine for a build of ours,
// the program (command line, pid) and TensorRT call for a watched build (docs/watch.md), whose
// model file and output path are not known and are not made up.
import { watchedLabel } from '../../shared/probe-fold.js';
import type { BuildRecord } from '../../shared/protocol.js';

export function buildHeaderLine(record: BuildRecord, plain: boolean): string {
  const w = record.watched;
  if (w) {
    const net = w.network?.name ? ` · network ${w.network.name}${w.network.layers !== undefined ? ` (${w.network.layers} layers)` : ''}` : ' · model unknown';
    return `Watched: ${watchedLabel(w)}${w.api ? ` · ${w.api}` : ''}${net}`;
  }
  return plain ? `Model: ${record.modelPath} → ${record.outputPath ?? '(default output)'}` : `${record.modelPath} → ${record.outputPath ?? ''}`;
}
