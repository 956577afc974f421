// Enforces the import directions described in the README ("How it is built") across apps/: code is grouped by the
// runtime it needs, and a layer may only reach the layers below it. Test files, test folders and
// build-tool configs are exempt (they legitimately reach across layers to set things up).
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appSourceFiles, importsOf } from './support/source-imports.js';

export { importsOf };

const ROOT = path.resolve(__dirname, '..');
const APPS = path.join(ROOT, 'apps');
const BUILTINS = new Set(builtinModules);
/** The surfaces that choose a build service (local or farm) when they start one. */
const FARM_WIRING = ['cli', 'mcp', 'lsp'];

export interface Violation {
  file: string;
  specifier: string;
  rule: string;
}

function appOf(file: string): string | null {
  const rel = path.relative(APPS, file).split(path.sep);
  return rel.length > 1 ? rel[0] : null;
}

function isNodeBuiltin(spec: string): boolean {
  return spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0]);
}

function isAddon(spec: string, resolved: string | null): boolean {
  if (/\.node$/.test(spec) || spec.includes('build/native') || spec === 'bindings' || spec === 'node-gyp-build') return true;
  return resolved !== null && /apps\/worker\/(addon|load-addon)(\.[cm]?[jt]s)?$/.test(resolved.split(path.sep).join('/'));
}

/** What a file of `app` may not import. `file` is absolute; relative specifiers are resolved. */
export function checkFile(file: string, source: string): Violation[] {
  const app = appOf(file);
  const out: Violation[] = [];
  const add = (specifier: string, rule: string) => out.push({ file: path.relative(ROOT, file), specifier, rule });
  for (const spec of importsOf(source)) {
    const resolved = spec.startsWith('.') ? path.resolve(path.dirname(file), spec) : null;
    const target = resolved ? appOf(resolved) : null;
    if (spec === 'electron' || spec.startsWith('electron/')) {
      if (app !== 'main') add(spec, "only apps/main imports 'electron'");
    }
    if (isAddon(spec, resolved) || /process\.dlopen/.test(spec)) {
      if (app !== 'worker') add(spec, 'only apps/worker loads the native addon');
    }
    if (app === 'shared') {
      if (isNodeBuiltin(spec)) add(spec, 'apps/shared imports no Node modules');
      if (/^(react|react-dom|zustand)(\/|$)/.test(spec)) add(spec, 'apps/shared imports no UI libraries');
      if (resolved && target !== 'shared') add(spec, 'apps/shared imports only apps/shared');
      if (!resolved && !isNodeBuiltin(spec) && spec !== 'zod' && !spec.startsWith('zod/')) add(spec, 'apps/shared depends on zod only');
    }
    if (app === 'renderer') {
      if (isNodeBuiltin(spec)) add(spec, 'apps/renderer never sees Node');
      if (target && ['service', 'main', 'worker', 'cli', 'mcp', 'lsp'].includes(target)) add(spec, 'apps/renderer depends only on apps/shared');
    }
    if (target === 'lsp' && !['lsp', 'cli'].includes(app ?? '')) add(spec, 'only apps/cli dispatches to apps/lsp');
    // MCP and LSP are peers: what both need (build arguments and results, progress messages,
    // cancel reasons, the stdio server's lifecycle) is in apps/surface, which imports neither.
    if (target === 'mcp' && !['mcp', 'cli'].includes(app ?? '')) add(spec, 'only apps/cli dispatches to apps/mcp');
    if (target === 'surface' && !['surface', 'mcp', 'lsp'].includes(app ?? '')) add(spec, 'only apps/mcp and apps/lsp use apps/surface');
    if (app === 'surface' && target && !['surface', 'shared', 'service', 'process'].includes(target))
      add(spec, 'apps/surface imports only apps/service, apps/process and apps/shared');
    // What every process entry needs from its own process (signals and exit, the event path's
    // scheduling priority): Node only, so the worker and the service share it without either
    // reaching into the other.
    if (app === 'process' && target && target !== 'process') add(spec, 'apps/process imports nothing of the app');
    if (app === 'worker' && target && !['worker', 'shared', 'process'].includes(target)) add(spec, 'apps/worker imports only apps/shared and apps/process');
    if (target === 'worker' && app !== 'worker' && resolved && !/apps\/worker\/messages(\.[cm]?[jt]s)?$/.test(resolved.split(path.sep).join('/'))) {
      add(spec, "only the worker's message schemas (apps/worker/messages.ts) are imported from apps/worker");
    }
    // Nothing below the surfaces may depend on them.
    if (target === 'main' && app !== 'main') add(spec, 'nothing imports apps/main');
    if (target === 'renderer' && app !== 'renderer') add(spec, 'nothing imports apps/renderer');
    // The farm runs builds through the local build service and serves the same API, so it sits
    // above apps/service: the service (its HTTP layer included) takes a build service factory
    // and the surfaces that start one wire the farm in.
    if (target === 'farm' && app !== 'farm' && !FARM_WIRING.includes(app ?? '')) add(spec, 'only apps/cli, apps/mcp and apps/lsp wire in apps/farm');
  }
  // A direct dlopen is loading an addon just the same.
  if (/\bprocess\.dlopen\s*\(/.test(source) && app !== 'worker') add('process.dlopen', 'only apps/worker loads the native addon');
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
    expect(rules('shared/x.ts', "import { x } from '../service/api.js';")).toContain('apps/shared imports only apps/shared');
    expect(rules('service/x.ts', "import { app } from 'electron';")).toContain("only apps/main imports 'electron'");
    expect(rules('renderer/x.tsx', "const e = require('electron');")).toContain("only apps/main imports 'electron'");
    expect(rules('service/x.ts', "import addon from '../../build/native/Release/tbs.node';")).toContain('only apps/worker loads the native addon');
    expect(rules('cli/x.ts', "import { loadAddon } from '../worker/load-addon.js';")).toContain('only apps/worker loads the native addon');
    expect(rules('main/x.ts', "process.dlopen(module, '/x.node');")).toContain('only apps/worker loads the native addon');
    expect(rules('renderer/x.tsx', "import { readFile } from 'node:fs/promises';")).toContain('apps/renderer never sees Node');
    expect(rules('renderer/x.tsx', "import type { BuildServiceApi } from '../service/api.js';")).toContain('apps/renderer depends only on apps/shared');
    expect(rules('service/x.ts', "import { PUSH } from '../main/ipc-channels.js';")).toContain('nothing imports apps/main');
    expect(rules('service/http/x.ts', "import { createServeService } from '../../farm/serve-queue.js';")).toContain('only apps/cli, apps/mcp and apps/lsp wire in apps/farm');
    expect(rules('service/x.ts', "const { QueueBuildService } = await import('../farm/queue-service.js');")).toContain('only apps/cli, apps/mcp and apps/lsp wire in apps/farm');
    expect(rules('main/x.ts', "import type { FarmRecord } from '../farm/farm-store.js';")).toContain('only apps/cli, apps/mcp and apps/lsp wire in apps/farm');
    expect(rules('worker/x.ts', "import { keys } from '../farm/keys.js';")).toContain('only apps/cli, apps/mcp and apps/lsp wire in apps/farm');
    expect(rules('lsp/x.ts', "import { CancelReasons } from '../mcp/build-tool.js';")).toContain('only apps/cli dispatches to apps/mcp');
    expect(rules('mcp/x.ts', "import { ActiveBuilds } from '../lsp/build-command.js';")).toContain('only apps/cli dispatches to apps/lsp');
    expect(rules('surface/x.ts', "import { runBuildTool } from '../mcp/build-tool.js';")).toContain('apps/surface imports only apps/service, apps/process and apps/shared');
    expect(rules('service/http/x.ts', "import { favourEventPath } from '../../worker/event-path-priority.js';")).toContain(
      "only the worker's message schemas (apps/worker/messages.ts) are imported from apps/worker",
    );
    expect(rules('worker/x.ts', "import { BuildFeed } from '../service/build-feed.js';")).toContain('apps/worker imports only apps/shared and apps/process');
    expect(rules('process/x.ts', "import { BuildView } from '../shared/build-view.js';")).toContain('apps/process imports nothing of the app');
    expect(rules('service/x.ts', "import { resolveUserPath } from '../surface/user-path.js';")).toContain('only apps/mcp and apps/lsp use apps/surface');
  });

  it('allows what the design allows', () => {
    expect(rules('shared/x.ts', "import { z } from 'zod';\nimport type { A } from './protocol.js';")).toEqual([]);
    expect(rules('main/x.ts', "import { app } from 'electron';\nimport fs from 'node:fs';\nimport { createBuildService } from '../service/build-service.js';")).toEqual([]);
    expect(rules('worker/x.ts', "const m = require('./addon.js');")).toEqual([]);
    expect(rules('cli/commands/x.ts', "import { createServeService } from '../../farm/serve-queue.js';")).toEqual([]);
    expect(rules('mcp/x.ts', "const m = await import('../farm/serve-queue.js');")).toEqual([]);
    expect(rules('farm/x.ts', "import { BuildFeed } from '../service/build-feed.js';")).toEqual([]);
    expect(rules('lsp/x.ts', "import { ProgressNotifier } from '../surface/progress-notifier.js';\nimport { ServiceError } from '../service/api.js';")).toEqual([]);
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
