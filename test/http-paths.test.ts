// The HTTP API's paths are written once (apps/shared/http-paths.ts): the server routes each one
// exactly once, the web client and the server build and match the same text for any id, the docs'
// table names every method of every path, and neither side spells an /api path of its own.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_PATHS, apiPath, apiPattern, type ApiPathName } from '../apps/shared/http-paths.js';
import { ROUTES } from '../apps/service/http/routes.js';

const root = path.join(__dirname, '..');
const read = (p: string) => fs.readFileSync(path.join(root, p), 'utf8');
const names = Object.keys(API_PATHS) as ApiPathName[];

describe('the HTTP paths, written once', () => {
  it('the server routes every path of the table, each exactly once', () => {
    expect(ROUTES.map((r) => r.path).sort()).toEqual([...names].sort());
  });

  it('no two templates match one request path (the first route would hide the other)', () => {
    for (const a of names)
      for (const b of names) {
        if (a === b) continue;
        expect(apiPattern(b).test(apiPath(a, { id: 'x' } as never)), `${a} read as ${b}`).toBe(false);
      }
  });

  it('an id the client encodes is the id the server captures, whatever it holds', () => {
    for (const id of ['b1', 'b 1', 'a/b', '..', 'x?y=1#z', 'ünï', '%41']) {
      const p = apiPath('buildEvents', { id });
      expect(p.startsWith('/api/builds/')).toBe(true);
      const m = apiPattern('buildEvents').exec(p);
      expect(m, p).not.toBeNull();
      expect(decodeURIComponent(m![1])).toBe(id);
      expect(apiPattern('build').test(p)).toBe(false);
    }
    expect(apiPath('buildEvents', { id: 'b 1' })).toBe('/api/builds/b%201/events');
  });

  it('a query is appended encoded, and a missing parameter is an error', () => {
    expect(apiPath('compare', {}, { a: 'b 1', b: 'c&d' })).toBe('/api/compare?a=b+1&b=c%26d');
    expect(new URL(`http://h${apiPath('enginesCheck', {}, { engine: 'a b.engine' })}`).searchParams.get('engine')).toBe('a b.engine');
    expect(() => apiPath('build', {} as never)).toThrow(/build: parameter "id" is missing/);
  });

  it("the docs' table names every method of every path", () => {
    const doc = read('docs/http-api.md');
    for (const r of ROUTES) {
      const template = API_PATHS[r.path].replace(/:([a-zA-Z]+)/g, '{$1}');
      for (const method of Object.keys(r.methods)) {
        if (method === 'HEAD') expect(doc, template).toContain(`\`GET ${template}\` (or \`HEAD\`)`);
        else expect(doc, `${method} ${template}`).toMatch(new RegExp(`^\\| \`${method} ${template.replace(/[{}?[\]]/g, '\\$&')}[\`?[]`, 'm'));
      }
    }
  });

  it('the server and the web client spell no /api path of their own', () => {
    for (const f of ['apps/service/http/routes.ts', 'apps/renderer/web/web-client.ts']) {
      // Code only: comments may name paths for the reader.
      const code = read(f)
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      expect(code.match(/['"`]\/api\//g), f).toBeNull();
    }
  });
});
