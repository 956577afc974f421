// The service is described once (apps/shared/build-service-api.ts) and every implementation is held
// to it by the compiler: the local service and the farm through `implements`, the page's clients
// through BuildClient, whose shared calls are derived from the description. Tests do not go through
// tsc here, so this one runs the project's compiler on small programs that import the real files
// and checks which of them it refuses: a client or a service that drifts from the description must
// not compile, and one that follows it must.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../../..');
const shared = (file: string) => JSON.stringify(path.join(repo, 'apps/shared', file).replace(/\.ts$/, '.js'));

const header = `
import type { BuildClient, ModelRef, SavedEngine } from ${shared('build-client.ts')};
import type { Answer, BuildServiceCalls, FarmServiceCalls, LocalServiceCalls, Remote } from ${shared('build-service-api.ts')};
import type { BackendInfo, BuildRecord } from ${shared('protocol.ts')};
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare const backends: BackendInfo[];
declare const records: BuildRecord[];
declare const model: ModelRef;
`;

/** A client with every required call, each as the description has it; `override` replaces some. */
const client = (override = '') => `
const base = {
  capabilities: { host: 'web', nativeDialogs: false, recentFiles: false } as const,
  listBackends: async () => backends,
  listBuilds: async () => records,
  openModel: async () => model,
  openDroppedFile: async () => model,
  startBuild: async () => ({ id: 'b1' }),
  cancelBuild: async () => undefined,
  subscribe: () => () => undefined,
  saveEngine: async (): Promise<SavedEngine | null> => null,
};
export const c: BuildClient = { ...base, ${override} };
`;

/** A service's calls that every kind has, as plain stubs; `extra` adds or replaces some. */
const service = (kind: 'BuildServiceCalls' | 'LocalServiceCalls' | 'FarmServiceCalls', extra = '') => `
declare const rec: BuildRecord;
export class S implements ${kind} {
  async listBackends() { return backends; }
  async inspectModel(): Promise<Answer<'inspectModel'>> { throw new Error('no'); }
  async startBuild() { return rec; }
  getBuild() { return rec; }
  listBuilds() { return records; }
  cancelBuild() { return true; }
  subscribe(): ReturnType<BuildServiceCalls['subscribe']> { throw new Error('no'); }
  async waitForResult(): Promise<Answer<'waitForResult'>> { throw new Error('no'); }
  enginePath() { return undefined; }
  async shutdown() {}
  ${extra}
}
`;

const localExtras = `
  async readBuildRoutes(): Promise<Answer<'readBuildRoutes'>> { throw new Error('no'); }
  getView() { return undefined; }
  detailsEvicted() { return false; }
  listEngines() { return []; }
  deleteEngines(): Answer<'deleteEngines'> { throw new Error('no'); }
  engineFolder() { return '/tmp'; }
`;

const farmExtras = `
  getView() { return undefined; }
  async startMatrix() { return records; }
  async farmStatus(): Promise<Answer<'farmStatus'>> { throw new Error('no'); }
  subscribeFarm() { return () => undefined; }
`;

const programs: Record<string, string> = {
  // The harness itself: what follows the description compiles.
  clientOk: client(),
  localOk: service('LocalServiceCalls', localExtras),
  farmOk: service('FarmServiceCalls', farmExtras),
  // The client's shared calls are the description's, awaited: the same type, not a copy of it.
  derived: `
    export const same: [
      Equal<Awaited<ReturnType<BuildClient['listBuilds']>>, ReturnType<BuildServiceCalls['listBuilds']>>,
      Equal<Parameters<NonNullable<BuildClient['deleteEngines']>>, Parameters<NonNullable<BuildServiceCalls['deleteEngines']>>>,
      Equal<NonNullable<BuildClient['listEngines']>, Remote<NonNullable<BuildServiceCalls['listEngines']>>>,
      Equal<Awaited<ReturnType<BuildClient['startBuild']>>['id'], Answer<'startBuild'>['id']>,
    ] = [true, true, true, true];
  `,
  // Drifts the compiler must refuse.
  clientWrongList: client(`listBuilds: async () => ['b1']`),
  clientWrongId: client(`startBuild: async () => ({ id: 1 })`),
  clientWrongDelete: client(`deleteEngines: async (names: number[]) => ({ deleted: names, refused: [] })`),
  clientWrongRoutes: client(`readBuildRoutes: async () => ({ json: '' })`),
  localWithoutEngines: service('LocalServiceCalls', localExtras.replace(/^ {2}listEngines.*$/m, '')),
  farmWithoutMatrix: service('FarmServiceCalls', farmExtras.replace(/^ {2}async startMatrix.*$/m, '')),
  serviceSyncList: service('BuildServiceCalls', '').replace('listBuilds() { return records; }', 'async listBuilds() { return records; }'),
};

let dir: string;
let errors: Map<string, string[]>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tbs-service-api-'));
  for (const [name, body] of Object.entries(programs)) fs.writeFileSync(path.join(dir, `${name}.ts`), header + body);
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(repo, 'tsconfig.base.json'),
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: [], noEmit: true, noUnusedLocals: false },
      files: Object.keys(programs).map((name) => `${name}.ts`),
    }),
  );
  const tsc = path.join(repo, 'node_modules/typescript/bin/tsc');
  const output = await new Promise<string>((resolve) => {
    execFile(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, maxBuffer: 16 << 20 }, (_err, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
  errors = new Map(Object.keys(programs).map((name) => [name, []]));
  errors.set('(elsewhere)', []);
  // An error is its first line and the indented lines that explain it (which name the member).
  let last: string[] | undefined;
  for (const line of output.split('\n')) {
    const m = /^(?:.*[\\/])?(\w+)\.ts\(\d+,\d+\): (error .*)$/.exec(line);
    if (/^\s/.test(line) && last) last[last.length - 1] += `\n${line.trim()}`;
    else if (m && errors.has(m[1]!)) (last = errors.get(m[1]!)!).push(m[2]!);
    else if (/error TS/.test(line)) (last = errors.get('(elsewhere)')!).push(line);
  }
}, 120_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('one description of the build service, checked by the compiler', () => {
  it('compiles what follows the description, and nothing fails outside the programs', () => {
    expect(errors.get('(elsewhere)')).toEqual([]);
    expect(errors.get('clientOk')).toEqual([]);
    expect(errors.get('localOk')).toEqual([]);
    expect(errors.get('farmOk')).toEqual([]);
  });

  it("derives the page's shared calls from the service's", () => {
    expect(errors.get('derived')).toEqual([]);
  });

  // Each of these differs from a program that compiles (above) by the one drift it is named for.
  it('refuses a client whose answers or arguments drift from the service', () => {
    expect(errors.get('clientWrongList')!.join('\n')).toMatch(/Promise<string\[\]>/);
    expect(errors.get('clientWrongId')!.join('\n')).toMatch(/'id'[^]*number/);
    expect(errors.get('clientWrongDelete')!.join('\n')).toMatch(/number\[\]/);
    expect(errors.get('clientWrongRoutes')!.join('\n')).toMatch(/backend|version|source/);
  });

  it('holds the local service and the farm to the calls their kind has', () => {
    expect(errors.get('localWithoutEngines')!.join('\n')).toMatch(/listEngines/);
    expect(errors.get('farmWithoutMatrix')!.join('\n')).toMatch(/startMatrix/);
    // An in-process call answered as a promise is a different call.
    expect(errors.get('serviceSyncList')!.join('\n')).toMatch(/listBuilds/);
  });
});
