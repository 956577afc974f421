// Plugin libraries are code: the worker dlopens them and runs their constructors. Which ones a
// build may name is the operator's decision, never a client's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildOptions } from '../shared/protocol.js';
import { ServiceError } from './api.js';

/**
 * Who decides which plugin libraries load. `any`: the caller is the operator (the CLI's own
 * `build`). `dirs`: only files inside these folders (a service's `--plugin-dir`s).
 */
export type PluginPolicy = { kind: 'any' } | { kind: 'dirs'; dirs: string[] };

export const PLUGIN_OPTIONS = ['staticPlugins', 'dynamicPlugins', 'pluginsToSerialize'] as const;

const bad = (msg: string) => new ServiceError('bad_input', msg);

/**
 * Plugin libraries (staticPlugins, dynamicPlugins, pluginsToSerialize): made absolute (a worker
 * may run elsewhere) and each an existing file, before any worker starts. Whether it is a plugin
 * library only TensorRT can tell, when it loads it.
 */
export function checkPluginLibraries(options: BuildOptions, _policy: PluginPolicy = { kind: 'any' }): void {
  for (const what of PLUGIN_OPTIONS) {
    const list = options[what];
    if (!list) continue;
    options[what] = list.map((p, i) => {
      if (typeof p !== 'string' || p.length === 0) throw bad(`${what}[${i}] is required`);
      if (p.includes('\0')) throw bad(`${what}[${i}] contains a NUL byte`);
      const abs = path.resolve(p);
      let st: fs.Stats;
      try {
        st = fs.statSync(abs);
      } catch {
        throw bad(`${what}: plugin library not found: ${abs}`);
      }
      if (!st.isFile()) throw bad(`${what}: plugin library is not a file: ${abs}`);
      return abs;
    });
  }
}
