// Where engines and shared timing caches live so that serve's clients can get what a worker on
// another machine built. The default is a folder mounted at the same path on every machine
// (NFS-style); an object store can implement the same interface later (upload after the build,
// a download URL or stream for serve).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ServiceError } from '../service/api.js';
import { untrustedFolder } from '../service/output-target.js';
import { ensurePrivateDir } from '../service/private-dir.js';
import type { Labels } from './labels.js';

export interface ArtifactStore {
  /** Where a worker writes the engine of a build that named no output path. */
  enginePathFor(buildId: string, modelPath: string, simulated: boolean): string;
  /** The shared timing cache of this worker's (GPU, TensorRT version), when its labels say both. */
  timingCacheFor(labels: Labels): string | undefined;
  /** Serve: the engine file its clients can download, when it exists. */
  locateEngine(outputPath: string | undefined): string | undefined;
  /**
   * The engine store `reuse` builds share (engine-reuse-store.ts), keyed like a local one; absent:
   * each machine uses its user's own store.
   */
  engineStoreDir?(): string;
}

/** Label values become file names: keep them to a safe alphabet. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');

export class SharedFolderArtifacts implements ArtifactStore {
  readonly root: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * The root may be a mount shared by the farm's machines: it must belong to this user (or root)
   * and not be writable by others without the sticky bit. The folders in it are the farm's own:
   * created 0700, and refused when someone else owns them or can write into them (the native
   * writer checks the engines folder again at the moment it writes).
   */
  ensure(): void {
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    const why = untrustedFolder(this.root, fs.statSync(this.root));
    if (why) throw new ServiceError('bad_input', `artifact folder: ${why}`);
    for (const d of ['engines', 'timing-caches', 'engine-store']) ensurePrivateDir(path.join(this.root, d), 'artifact');
  }

  enginePathFor(buildId: string, modelPath: string, simulated: boolean): string {
    const stem = path.basename(modelPath).replace(/\.onnx$/i, '');
    return path.join(this.root, 'engines', `${stem}-${buildId}${simulated ? '.simulated.engine' : '.engine'}`);
  }

  timingCacheFor(labels: Labels): string | undefined {
    if (!labels.gpu || !labels.trt) return undefined;
    return path.join(this.root, 'timing-caches', `${safe(labels.gpu)}__trt-${safe(labels.trt)}.cache`);
  }

  /**
   * Only a file directly in this folder's engines/ (the path, not where a link points: anything
   * that can write to Redis can write a record naming any path, and anything that can write to a
   * shared folder can swap an engine for a symbolic link), and only a regular file, not a link.
   */
  locateEngine(outputPath: string | undefined): string | undefined {
    if (!outputPath || !path.isAbsolute(outputPath)) return undefined;
    const p = path.resolve(outputPath);
    if (p !== outputPath || path.dirname(p) !== path.join(this.root, 'engines')) return undefined;
    try {
      return fs.lstatSync(p).isFile() ? p : undefined;
    } catch {
      return undefined;
    }
  }

  engineStoreDir(): string {
    return path.join(this.root, 'engine-store');
  }
}

/** `p` when it is a regular file (a link followed): never a FIFO or a device to serve from. */
function regularFile(p: string | undefined): string | undefined {
  try {
    return p && fs.statSync(p).isFile() ? p : undefined;
  } catch {
    return undefined;
  }
}

/** Without --artifacts: paths are used as given; serve finds an engine only if it sees the path. */
export class LocalPathArtifacts implements ArtifactStore {
  enginePathFor(): string {
    throw new Error('no artifact folder');
  }
  timingCacheFor(): undefined {
    return undefined;
  }
  locateEngine(outputPath: string | undefined): string | undefined {
    return regularFile(outputPath);
  }
}
