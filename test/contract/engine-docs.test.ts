// docs/engines.md against the code it documents: the manifest's field table against the schema
// (EngineManifest), the reasons `check` can give against REBUILD_REASON_KINDS and
// UNKNOWN_REASON_KINDS, and the table of options that are not part of an engine's identity
// against the options table's `engineIdentity`. A field, reason or option added to the code and
// not to the docs (or the other way round) fails here by its name.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_OPTIONS } from '../../apps/shared/build-options.js';
import { EngineManifest, REBUILD_REASON_KINDS, UNKNOWN_REASON_KINDS } from '../../apps/shared/engine-manifest.js';

const doc = fs.readFileSync(path.join(__dirname, '../../docs/engines.md'), 'utf8');

/** The rows of the first markdown table after `heading`: each row's cells, header and rule left out. */
function tableAfter(heading: string): string[][] {
  const at = doc.indexOf(heading);
  expect(at, `docs/engines.md has no "${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = doc.slice(at).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The `code` names in a cell: "`buildId`, `createdAt`" → ["buildId", "createdAt"]. */
const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

describe('docs/engines.md', () => {
  it('lists every field of the manifest schema, and no other, each with what it holds', () => {
    const rows = tableAfter('## The manifest');
    const documented = rows.flatMap((r) => names(r[0]));
    expect([...documented].sort()).toEqual(Object.keys(EngineManifest.shape).sort());
    for (const r of rows) expect(r[1].length, r[0]).toBeGreaterThan(5);
  });

  it('names every reason check can give', () => {
    const section = doc.slice(doc.indexOf('## check'), doc.indexOf('## Reuse'));
    for (const kind of [...REBUILD_REASON_KINDS, ...UNKNOWN_REASON_KINDS]) expect(section, kind).toContain(`\`${kind}\``);
  });

  it("lists exactly the options the options table leaves out of an engine's identity", () => {
    const rows = tableAfter("### Options that are not part of an engine's identity");
    const documented = rows.flatMap((r) => names(r[0]));
    const notIdentity = BUILD_OPTIONS.filter((e) => e.engineIdentity !== true).map((e) => e.field);
    expect([...documented].sort()).toEqual([...notIdentity].sort());
  });
});
