// A build option is written in three source files (issue 39): its options-table entry
// (apps/shared/build-options.ts), its line of the native request list
// (native/src/core/request_fields.def) and the TensorRT call that applies it. Every other part
// (the C++ request, its reader and echo, the manifest, the reuse key, every surface) is derived.
// maxAuxStreams, an option with nothing to translate, stands for them: a fourth file naming it
// means something is written by hand again. Tests and docs may name it freely.
import * as fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const SOURCE = /\.(ts|tsx|mts|js|cjs|mjs|cc|h|hpp|def)$/;

function sources(dir: string, out: string[] = []): string[] {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) {
      if (d.name === 'node_modules' || d.name === 'test' || d.name === 'tests' || d.name === 'dist') continue;
      sources(p, out);
    } else if (SOURCE.test(d.name) && !/\.test\.tsx?$/.test(d.name)) out.push(p);
  }
  return out;
}

describe('an option is written where it must be, and nowhere else', () => {
  it('maxAuxStreams: its table entry, its request field, its TensorRT call', () => {
    const files = ['apps', 'native', 'bin', 'scripts', 'tools', 'editors']
      .filter((d) => fs.existsSync(path.join(ROOT, d)))
      .flatMap((d) => sources(path.join(ROOT, d)))
      .filter((f) => fs.readFileSync(f, 'utf8').includes('maxAuxStreams'))
      .map((f) => path.relative(ROOT, f))
      .sort();
    expect(files).toEqual(['apps/shared/build-options.ts', 'native/src/core/request_fields.def', 'native/src/trt/trt_backend.cc']);
  });
});
