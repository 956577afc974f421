// Engines in the build service's default output folder: what a surface lists and may delete.
// Shared by the service, its HTTP API and the renderer, so all three speak one shape.

export interface EngineFile {
  /** The file name inside the output folder (never a path). */
  name: string;
  bytes: number;
  /** ISO 8601 time of the last write. */
  modifiedAt: string;
  /** The build of this service run that wrote it, when there is one. */
  buildId?: string;
  /** Written by the simulated backend (its header says so): not a TensorRT engine. */
  simulated: boolean;
}

export interface DeleteEnginesResult {
  deleted: string[];
  refused: Array<{ name: string; reason: string }>;
}
