// What a timing-cache path must be before a build may use it (and later write it).
import * as path from 'node:path';
import { checkParentDir, probeWritable } from './build-validation.js';

export function checkTimingCacheFile(cachePath: string): void {
  checkParentDir(cachePath, 'timing cache');
  // A missing cache file is fine (the build creates it); a corrupt one is the backend's warning.
  probeWritable(path.dirname(cachePath), 'timing cache');
}
