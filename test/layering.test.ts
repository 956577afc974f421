// The rooms of apps/ and who may import whom, as tools/rooms.json writes them (the one place: ESLint
// reads the same file, and docs/architecture.md's table is rendered from it). Code is grouped by
// the runtime it needs, and a room may reach only the rooms the file lists for it. Test files,
// test folders and build-tool configs are exempt (they legitimately reach across rooms to set
// things up). The last part runs ESLint (tools/lint's install) on the same snippets and fails when
// the two checkers disagree, so neither can drift from the file without a red test.
import { readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appSourceFiles, importsOf } from './support/source-imports.js';
import { docRoomsTable, renderRoomsTable } from '../tools/rooms-table.mjs';

export { importsOf };

const ROOT = path.resolve(__dirname, '..');
const APPS = path.join(ROOT, 'apps');
const BUILTINS = new Set(builtinModules);

interface RoomSpec {
  mayImport: string[];
  noNode?: string;
  noPackages?: { names: string[]; because: string };
  packagesOnly?: { names: string[]; because: string };
}
interface Spec {
  rooms: Record<string, RoomSpec>;
  contracts: Record<string, { files: string[]; because: string }>;
  electron: { room: string; because: string };
  addon: { room: string; loaders: string[]; folders: string[]; packages: string[]; because: string };
}
export const SPEC: Spec = JSON.parse(readFileSync(path.join(ROOT, 'tools/rooms.json'), 'utf8'));

export interface Violation {
  file: string;
  specifier: string;
  rule: string;
}

function appOf(file: string): string | null {
  const rel = path.relative(APPS, file).split(path.sep);
  return rel.length > 1 && rel[0] !== '..' ? rel[0] : null;
}

const posix = (p: string) => p.split(path.sep).join('/');
const noExt = (p: string) => p.replace(/\.[cm]?[jt]sx?$/, '');

function isNodeBuiltin(spec: string): boolean {
  return spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0]);
}

const packageIs = (spec: string, name: string) => spec === name || spec.startsWith(`${name}/`);

function isAddon(spec: string, resolved: string | null): boolean {
  if (/\.node$/.test(spec) || SPEC.addon.packages.includes(spec)) return true;
  if (SPEC.addon.folders.some((f) => new RegExp(`(^|/)${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/|$)`).test(spec))) return true;
  if (resolved === null) return false;
  const rel = posix(path.relative(ROOT, resolved));
  return SPEC.addon.loaders.some((l) => noExt(l) === noExt(rel)) || SPEC.addon.folders.some((f) => rel === f || rel.startsWith(`${f}/`));
}

/** The room rule's words, the same as ESLint's zone message. */
export const roomRule = (room: string) => `apps/${room} may import only ${SPEC.rooms[room].mayImport.join(', ') || 'itself'} (tools/rooms.json)`;

/** What a file may not import, by tools/rooms.json. `file` is absolute; relative specifiers are resolved. */
export function checkFile(file: string, source: string): Violation[] {
  const app = appOf(file);
  const room = app ? SPEC.rooms[app] : undefined;
  const out: Violation[] = [];
  const add = (specifier: string, rule: string) => {
    if (!out.some((v) => v.specifier === specifier && v.rule === rule)) out.push({ file: path.relative(ROOT, file), specifier, rule });
  };
  for (const spec of importsOf(source)) {
    const resolved = spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : null;
    const target = resolved ? appOf(resolved) : null;
    if (packageIs(spec, 'electron') && app !== SPEC.electron.room) add(spec, SPEC.electron.because);
    if (isAddon(spec, resolved) && app !== SPEC.addon.room) add(spec, SPEC.addon.because);
    if (!room) continue;
    if (target && target !== app) {
      if (SPEC.rooms[target] && !room.mayImport.includes(target)) add(spec, roomRule(app!));
      const contract = SPEC.contracts[target];
      if (contract && room.mayImport.includes(target)) {
        const rel = posix(path.relative(path.join(APPS, target), resolved!));
        if (!contract.files.some((f) => noExt(f) === noExt(rel))) add(spec, contract.because);
      }
    }
    if (resolved) continue;
    if (room.noNode && isNodeBuiltin(spec)) add(spec, room.noNode);
    if (room.noPackages && room.noPackages.names.some((n) => packageIs(spec, n))) add(spec, room.noPackages.because);
    if (room.packagesOnly && !spec.startsWith('node:') && !room.packagesOnly.names.some((n) => packageIs(spec, n))) add(spec, room.packagesOnly.because);
  }
  // A direct dlopen is loading an addon just the same.
  if (/\bprocess\.dlopen\s*\(/.test(source) && app !== SPEC.addon.room) add('process.dlopen', SPEC.addon.because);
  return out;
}

describe('import directions', () => {
  const files = appSourceFiles(APPS);

  it('finds the source of every app', () => {
    const apps = new Set(files.map(appOf));
    for (const app of ['shared', 'worker', 'service', 'main']) expect(apps, app).toContain(app);
    expect(files.length).toBeGreaterThan(10);
  });

  it('holds across apps/', () => {
    const violations = files.flatMap((f) => checkFile(f, readFileSync(f, 'utf8')));
    expect(violations.map((v) => `${v.file}: "${v.specifier}" — ${v.rule}`)).toEqual([]);
  });
});

describe('the checker itself', () => {
  const at = (rel: string) => path.join(APPS, rel);
  const rules = (rel: string, src: string) => checkFile(at(rel), src).map((v) => v.rule);

  it('reads every import form, ignoring comments', () => {
    const src = [
      "import a from 'a';",
      "import type { B } from './b.js';",
      'import * as c from "c";',
      "import { d1,\n  d2 } from 'd';",
      "export { e } from './e.js';",
      "import 'side-effect';",
      "const f = await import('f');",
      "const g = require('g');",
      "import h = require('h');",
      "// import x from 'commented';",
      "/* require('blocked') */",
      "const url = 'app://studio/';",
    ].join('\n');
    expect(importsOf(src).sort()).toEqual(['./b.js', './e.js', 'a', 'c', 'd', 'f', 'g', 'h', 'side-effect'].sort());
  });

  it('catches each kind of violation', () => {
    expect(rules('shared/x.ts', "import fs from 'node:fs';")).toContain('apps/shared imports no Node modules');
    expect(rules('shared/x.ts', "import path from 'path';")).toContain('apps/shared imports no Node modules');
    expect(rules('shared/x.ts', "import { useState } from 'react';")).toContain('apps/shared imports no UI libraries');
    expect(rules('shared/x.ts', "import { x } from '../service/api.js';")).toContain(roomRule('shared'));
    expect(rules('service/x.ts', "import { app } from 'electron';")).toContain("only apps/main imports 'electron'");
    expect(rules('renderer/x.tsx', "const e = require('electron');")).toContain("only apps/main imports 'electron'");
    expect(rules('service/x.ts', "import addon from '../../build/native/Release/tbs.node';")).toContain('only apps/worker loads the native addon');
    expect(rules('cli/x.ts', "import { loadAddon } from '../worker/load-addon.js';")).toContain('only apps/worker loads the native addon');
    expect(rules('main/x.ts', "process.dlopen(module, '/x.node');")).toContain('only apps/worker loads the native addon');
    expect(rules('renderer/x.tsx', "import { readFile } from 'node:fs/promises';")).toContain('apps/renderer never sees Node');
    expect(rules('renderer/x.tsx', "import type { BuildServiceApi } from '../service/api.js';")).toContain(roomRule('renderer'));
    expect(rules('service/x.ts', "import { PUSH } from '../main/ipc-channels.js';")).toContain(roomRule('service'));
    expect(rules('service/http/x.ts', "import { createServeService } from '../../farm/serve-queue.js';")).toContain(roomRule('service'));
    expect(rules('service/x.ts', "const { QueueBuildService } = await import('../farm/queue-service.js');")).toContain(roomRule('service'));
    expect(rules('main/x.ts', "import type { FarmRecord } from '../farm/farm-store.js';")).toContain(roomRule('main'));
    expect(rules('worker/x.ts', "import { keys } from '../farm/keys.js';")).toContain(roomRule('worker'));
    expect(rules('lsp/x.ts', "import { CancelReasons } from '../mcp/build-tool.js';")).toContain(roomRule('lsp'));
    expect(rules('mcp/x.ts', "import { ActiveBuilds } from '../lsp/build-command.js';")).toContain(roomRule('mcp'));
    expect(rules('surface/x.ts', "import { runBuildTool } from '../mcp/build-tool.js';")).toContain(roomRule('surface'));
    expect(rules('service/http/x.ts', "import { favourEventPath } from '../../worker/event-path-priority.js';")).toContain(
      "only the worker's message schemas (apps/worker/messages.ts) are imported from apps/worker",
    );
    expect(rules('worker/x.ts', "import { BuildFeed } from '../service/build-feed.js';")).toContain(roomRule('worker'));
    expect(rules('process/x.ts', "import { BuildView } from '../shared/build-view.js';")).toContain(roomRule('process'));
    expect(rules('service/x.ts', "import { resolveUserPath } from '../surface/user-path.js';")).toContain(roomRule('service'));
  });

  it('allows what the design allows', () => {
    expect(rules('shared/x.ts', "import { z } from 'zod';\nimport type { A } from './protocol.js';")).toEqual([]);
    expect(rules('main/x.ts', "import { app } from 'electron';\nimport fs from 'node:fs';\nimport { createBuildService } from '../service/build-service.js';")).toEqual([]);
    expect(rules('worker/x.ts', "const m = require('./addon.js');")).toEqual([]);
    expect(rules('cli/commands/x.ts', "import { createServeService } from '../../farm/serve-queue.js';")).toEqual([]);
    expect(rules('mcp/x.ts', "const m = await import('../farm/serve-queue.js');")).toEqual([]);
    expect(rules('farm/x.ts', "import { BuildFeed } from '../service/build-feed.js';")).toEqual([]);
    expect(rules('lsp/x.ts', "import { ProgressNotifier } from '../surface/progress-notifier.js';\nimport { ServiceError } from '../service/api.js';")).toEqual([]);
    // Decided (docs/architecture.md): the language server wires in the farm for `lsp --queue`.
    expect(rules('lsp/x.ts', "const m = await import('../farm/serve-queue.js');")).toEqual([]);
    expect(rules('cli/x.ts', "import { runBuild } from '../surface/run-build.js';")).toEqual([]);
    expect(rules('surface/x.ts', "import type { BuildServiceApi } from '../service/api.js';\nimport { BuildView } from '../shared/build-view.js';")).toEqual([]);
    expect(rules('service/x.ts', "import { WorkerMessage } from '../worker/messages.js';\nimport { favourEventPath } from '../process/event-path-priority.js';")).toEqual([]);
    expect(rules('worker/x.ts', "import { favourEventPath } from '../process/event-path-priority.js';")).toEqual([]);
    expect(rules('renderer/x.tsx', "import { create } from 'zustand';\nimport type { BuildClient } from '../shared/build-client.js';")).toEqual([]);
  });
});

describe('one way to follow a build', () => {
  // Surfaces follow a build through the shared LiveView (apps/shared/live-view.ts), which owns
  // the stream cursor and the view it feeds. The web client's SSE transport is the one place
  // outside apps/shared that keeps a bare cursor: it needs the resume point to reconnect, while
  // the page it feeds (apps/renderer/store/live-build.ts) folds through a LiveView.
  it('constructs StreamCursor outside apps/shared in at most one file', () => {
    const outside = appSourceFiles(APPS)
      .filter((f) => appOf(f) !== 'shared' && /\bnew StreamCursor\s*\(/.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
    expect(outside).toEqual(['apps/renderer/web/web-client.ts']);
  });
});

describe("docs/architecture.md's rooms table", () => {
  it('is the one rendered from tools/rooms.json', () => {
    const table = docRoomsTable(readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));
    expect(table, 'docs/architecture.md has no rooms table markers').not.toBeNull();
    // On failure: `node tools/rooms-table.mjs --write`.
    expect(table).toBe(renderRoomsTable(SPEC));
  });

  it('names every room of apps/ and no room that is not there', () => {
    const folders = new Set(appSourceFiles(APPS).map((f) => appOf(f)));
    expect(Object.keys(SPEC.rooms).sort()).toEqual([...folders].sort());
  });
});

// ESLint (tools/lint/eslint.config.mjs) reads the same file; these run both checkers on the same
// snippets, placed in each room, and require the same findings: every room importing a real file
// of every other room (a forbidden direction must be refused by both, an allowed one by neither),
// and the package rules. Uses tools/lint's own install, as test/tooling/lint-config.test.ts does.
describe('ESLint and this checker', () => {
  interface LintMessage {
    ruleId: string | null;
    message: string;
  }
  interface ESLintLike {
    lintText(code: string, opts: { filePath: string }): Promise<Array<{ messages: LintMessage[] }>>;
  }
  const IMPORT_RULES = ['import-x/no-restricted-paths', 'no-restricted-imports', 'no-restricted-properties'];
  /** Every message the rooms file can give: ESLint's text ends with one of them. */
  const KNOWN = [
    ...Object.keys(SPEC.rooms).map(roomRule),
    ...Object.values(SPEC.contracts).map((c) => c.because),
    SPEC.electron.because,
    SPEC.addon.because,
    ...Object.values(SPEC.rooms).flatMap((r) => [r.noNode, r.noPackages?.because, r.packagesOnly?.because].filter((m): m is string => !!m)),
  ];
  let eslint: ESLintLike;

  beforeAll(() => {
    const { ESLint } = createRequire(path.join(ROOT, 'tools/lint/package.json'))('eslint') as { ESLint: new (o: { cwd: string }) => ESLintLike };
    eslint = new ESLint({ cwd: ROOT });
  }, 60_000);

  async function eslintRules(file: string, src: string): Promise<string[]> {
    const [result] = await eslint.lintText(src, { filePath: file });
    const found = result.messages
      .filter((m) => IMPORT_RULES.includes(m.ruleId ?? ''))
      .map((m) => KNOWN.find((k) => m.message.endsWith(k)) ?? `(not from tools/rooms.json) ${m.message}`);
    return [...new Set(found)].sort();
  }
  const ourRules = (file: string, src: string) => [...new Set(checkFile(file, src).map((v) => v.rule))].sort();

  /** A real top-level file of each room (the resolver must find it), and the worker's contract. */
  function targets(): Array<{ room: string; file: string }> {
    const out: Array<{ room: string; file: string }> = [];
    const files = appSourceFiles(APPS).sort();
    for (const room of Object.keys(SPEC.rooms)) {
      const top = files.filter((f) => appOf(f) === room && path.dirname(f) === path.join(APPS, room));
      const contract = SPEC.contracts[room]?.files.map((c) => path.join(APPS, room, c)) ?? [];
      const plain = top.find((f) => !contract.includes(f) && !SPEC.addon.loaders.some((l) => path.join(ROOT, l) === f));
      if (plain) out.push({ room, file: plain });
      for (const c of contract) out.push({ room, file: c });
    }
    return out;
  }

  it('agree on every room importing every other room', async () => {
    const all = targets();
    expect(all.length).toBeGreaterThanOrEqual(Object.keys(SPEC.rooms).length);
    const disagreements: string[] = [];
    let refused = 0;
    for (const from of Object.keys(SPEC.rooms)) {
      const file = path.join(APPS, from, from === 'renderer' ? 'x.tsx' : 'x.ts');
      for (const to of all.filter((t) => t.room !== from)) {
        const spec = posix(path.relative(path.dirname(file), to.file)).replace(/\.tsx?$/, '.js');
        const src = `import { x } from '${spec}';\nexport const y = x;\n`;
        const ours = ourRules(file, src);
        const theirs = await eslintRules(file, src);
        if (ours.length) refused++;
        if (JSON.stringify(ours) !== JSON.stringify(theirs)) disagreements.push(`apps/${from} → ${spec}: this test ${JSON.stringify(ours)}, ESLint ${JSON.stringify(theirs)}`);
        // The file's word: a room not listed is refused, a listed one allowed (its contract aside).
        const listed = SPEC.rooms[from].mayImport.includes(to.room);
        expect(ours.includes(roomRule(from)), `apps/${from} → apps/${to.room}`).toBe(!listed);
      }
    }
    expect(disagreements).toEqual([]);
    expect(refused).toBeGreaterThan(10);
  }, 120_000);

  const snippets: Array<[string, string]> = [
    ['shared/x.ts', "import fs from 'node:fs';"],
    ['shared/x.ts', "import path from 'path';"],
    ['shared/x.ts', "import { useState } from 'react';"],
    ['shared/x.ts', "import { Redis } from 'ioredis';"],
    ['shared/x.ts', "import { z } from 'zod';"],
    ['service/x.ts', "import { app } from 'electron';"],
    ['renderer/x.tsx', "import { ipcRenderer } from 'electron/renderer';"],
    ['renderer/x.tsx', "import { readFile } from 'node:fs/promises';"],
    ['renderer/x.tsx', "import { create } from 'zustand';"],
    ['main/x.ts', "import { app } from 'electron';\nimport fs from 'node:fs';"],
    ['cli/x.ts', "import { loadAddon } from '../worker/load-addon.js';"],
    ['service/x.ts', "import addon from '../../build/native/Release/tbs.node';"],
    ['farm/x.ts', "import bindings from 'bindings';"],
    ['worker/x.ts', "import { loadAddon } from './load-addon.js';"],
    ['main/x.ts', "process.dlopen(module, '/x.node');"],
    ['worker/x.ts', "process.dlopen(module, '/x.node');"],
    ['lsp/x.ts', "const m = await import('../farm/serve-queue.js');"],
  ];
  it.each(snippets)('agree on %s: %s', async (rel, src) => {
    const file = path.join(APPS, rel);
    expect(await eslintRules(file, src)).toEqual(ourRules(file, src));
  });

  it('both refuse a forbidden import (a fixture in apps/service importing apps/main)', async () => {
    const file = path.join(APPS, 'service/x.ts');
    const src = "import { PUSH } from '../main/ipc-channels.js';\nexport const p = PUSH;\n";
    expect(ourRules(file, src)).toEqual([roomRule('service')]);
    expect(await eslintRules(file, src)).toEqual([roomRule('service')]);
  });
});
