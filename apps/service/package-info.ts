// This package's own facts (name, version), read once from its package.json whether the code runs
// from the sources (apps/...) or from dist/ (dist/apps/...), which sit at different depths.
import * as fs from 'node:fs';
import * as path from 'node:path';

const PACKAGE_NAME = 'trt-build-studio';

let cached: { version: string } | undefined;

/** The version in this package's package.json ("0.0.0" if it cannot be found). */
export function packageVersion(): string {
  if (cached) return cached.version;
  for (let dir = __dirname, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version) {
        cached = { version: pkg.version };
        return pkg.version;
      }
    } catch {
      // Not here: one level up.
    }
  }
  return '0.0.0';
}
