// The ESLint configuration (tools/lint/eslint.config.mjs) run on snippets placed in each room of
// apps/: every import direction test/layering.test.ts forbids, ESLint forbids too, and what the
// design allows passes. Also: an import loop is caught. Uses tools/lint's own install, which
// `npm ci` makes (postinstall: lint:install).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const LINT_PKG = path.join(ROOT, 'tools/lint/package.json');

interface LintMessage {
  ruleId: string | null;
  message: string;
}
interface ESLintLike {
  lintText(code: string, opts: { filePath: string }): Promise<Array<{ messages: LintMessage[] }>>;
  lintFiles(patterns: string[]): Promise<Array<{ filePath: string; messages: LintMessage[] }>>;
}

let eslint: ESLintLike;

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'tools/lint/node_modules/eslint'))) {
    throw new Error('tools/lint/node_modules is missing: run `npm run lint:install` (npm ci runs it)');
  }
  // The same resolution the npm scripts use: eslint from tools/lint's install, the root's config.
  // ignore: false, since the config ignores the loop fixture below (a run killed before it removed
  // the fixture must not fail `npm run lint`).
  const { ESLint } = createRequire(LINT_PKG)('eslint') as { ESLint: new (o: { cwd: string; ignore: boolean }) => ESLintLike };
  eslint = new ESLint({ cwd: ROOT, ignore: false });
}, 60_000);

/** The messages of the rules that guard imports, for `src` as if it were the file `rel` of apps/. */
async function importFindings(rel: string, src: string): Promise<string[]> {
  return findings(path.join(ROOT, 'apps', rel), src);
}

async function findings(filePath: string, src: string): Promise<string[]> {
  const [result] = await eslint.lintText(src, { filePath });
  return result.messages
    .filter((m) => ['import-x/no-restricted-paths', 'no-restricted-imports', 'no-restricted-properties', 'import-x/no-cycle'].includes(m.ruleId ?? ''))
    .map((m) => m.message);
}

describe('the rooms of apps/ in ESLint', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['shared/x.ts', "import fs from 'node:fs';", /apps\/shared imports no Node modules/],
    ['shared/x.ts', "import path from 'path';", /apps\/shared imports no Node modules/],
    ['shared/x.ts', "import { useState } from 'react';", /apps\/shared imports no UI libraries/],
    ['shared/x.ts', "import { Redis } from 'ioredis';", /apps\/shared depends on zod only/],
    ['shared/x.ts', "import { createBuildService } from '../service/build-service.js';", /apps\/shared may import only itself/],
    ['service/x.ts', "import { app } from 'electron';", /only apps\/main imports 'electron'/],
    ['renderer/x.tsx', "import { ipcRenderer } from 'electron/renderer';", /only apps\/main imports 'electron'/],
    ['cli/x.ts', "import { loadAddon } from '../worker/load-addon.js';", /only apps\/worker loads the native addon/],
    ['main/x.ts', "process.dlopen(module, '/x.node');", /only apps\/worker loads the native addon/],
    ['renderer/x.tsx', "import { readFile } from 'node:fs/promises';", /apps\/renderer never sees Node/],
    ['renderer/x.tsx', "import type { BuildServiceApi } from '../service/api.js';", /apps\/renderer may import only shared/],
    ['service/x.ts', "import { PUSH } from '../main/ipc-channels.js';", /apps\/service may import only shared, worker/],
    ['service/http/x.ts', "import { createServeService } from '../../farm/serve-queue.js';", /apps\/service may import only/],
    ['main/x.ts', "import type { FarmRecord } from '../farm/farm-store.js';", /apps\/main may import only/],
    ['mcp/x.ts', "import { runLsp } from '../lsp/server.js';", /apps\/mcp may import only/],
    ['worker/x.ts', "import { createBuildService } from '../service/build-service.js';", /apps\/worker may import only shared/],
    // MCP and LSP are peers; what both need is in apps/surface, which imports neither.
    ['lsp/x.ts', "import { runBuildTool } from '../mcp/build-tool.js';", /apps\/lsp may import only/],
    ['surface/x.ts', "import { runBuildTool } from '../mcp/build-tool.js';", /apps\/surface may import only/],
    ['process/x.ts', "import { BuildView } from '../shared/build-view.js';", /apps\/process may import only/],
  ];
  it.each(cases)('%s: %s is refused', async (rel, src, rule) => {
    expect(await importFindings(rel, src)).toEqual(expect.arrayContaining([expect.stringMatching(rule)]));
  });

  const allowed: Array<[string, string]> = [
    ['shared/x.ts', "import { z } from 'zod';\nimport type { BuildEvent } from './protocol.js';"],
    ['main/x.ts', "import { app } from 'electron';\nimport fs from 'node:fs';\nimport { createBuildService } from '../service/build-service.js';"],
    ['worker/x.ts', "import { loadAddon } from './load-addon.js';"],
    ['cli/commands/x.ts', "import { createServeService } from '../../farm/serve-queue.js';"],
    ['mcp/x.ts', "const m = await import('../farm/serve-queue.js');"],
    ['farm/x.ts', "import { createBuildService } from '../service/build-service.js';"],
    ['lsp/x.ts', "import { ProgressNotifier } from '../surface/progress-notifier.js';"],
    ['worker/x.ts', "import { favourEventPath } from '../process/event-path-priority.js';"],
    ['service/http/x.ts', "import { favourEventPath } from '../../process/event-path-priority.js';"],
    ['renderer/x.tsx', "import { create } from 'zustand';\nimport type { BuildEvent } from '../shared/protocol.js';"],
    // Tests reach across rooms to set things up.
    ['service/test/x.test.ts', "import { PUSH } from '../../main/ipc-channels.js';\nimport { app } from 'electron';"],
  ];
  it.each(allowed)('%s: %s is allowed', async (rel, src) => {
    expect(await importFindings(rel, src)).toEqual([]);
  });
});

describe('import loops in ESLint', () => {
  // Two real files, since a loop is found by reading what the imported file imports in turn; not
  // under apps/, where test/import-cycles.test.ts (perhaps running alongside) would see the loop.
  const dir = path.join(ROOT, 'test/tooling', `lint-cycle-fixture-${process.pid}`);
  beforeAll(() => {
    // What a run killed before its afterAll left behind.
    for (const n of fs.readdirSync(path.dirname(dir))) if (n.startsWith('lint-cycle-fixture-')) fs.rmSync(path.join(path.dirname(dir), n), { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
    fs.writeFileSync(path.join(dir, 'b.ts'), "import { a } from './a.js';\nexport const b = () => a;\n");
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are refused, and the file without the loop passes', async () => {
    const a = path.join(dir, 'a.ts');
    expect(await findings(a, fs.readFileSync(a, 'utf8'))).toEqual([expect.stringMatching(/Dependency cycle/)]);
    fs.writeFileSync(path.join(dir, 'b.ts'), 'export const b = () => 1;\n');
    expect(await findings(a, fs.readFileSync(a, 'utf8'))).toEqual([]);
  });
});
