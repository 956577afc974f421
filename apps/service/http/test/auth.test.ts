import { describe, expect, it } from 'vitest';
import { hostAllowed, parseCookies, tokenMatches } from '../auth.js';
import { checkClientPath } from '../paths.js';

describe('Host check', () => {
  it('allows loopback names and IP literals on our port only', () => {
    for (const h of ['127.0.0.1:8177', 'localhost:8177', 'LOCALHOST:8177', '[::1]:8177', '192.168.1.20:8177']) {
      expect(hostAllowed(h, 8177, '127.0.0.1'), h).toBe(true);
    }
    for (const h of ['127.0.0.1:8178', 'evil.example:8177', 'localhost.evil.example:8177', '127.0.0.1', 'a:b:c', '', '[::1]']) {
      expect(hostAllowed(h, 8177, '127.0.0.1'), h).toBe(false);
    }
    expect(hostAllowed(undefined, 8177, '127.0.0.1')).toBe(false);
    expect(hostAllowed('localhost', 80, '127.0.0.1')).toBe(true);
  });
});

describe('token', () => {
  it('matches only the exact token, whatever the lengths', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('abcd', 'abc')).toBe(false);
    expect(tokenMatches('', 'abc')).toBe(false);
    expect(tokenMatches(undefined, 'abc')).toBe(false);
  });

  it('parses cookies, including encoded and quoted values', () => {
    const c = parseCookies('a=1; tbs_token=x%2Fy%3D; q="v"; bad; =x');
    expect(c.get('tbs_token')).toBe('x/y=');
    expect(c.get('q')).toBe('v');
    expect(c.has('bad')).toBe(false);
  });
});

describe('client paths', () => {
  it('resolves to absolute paths and refuses ".." and NUL', () => {
    expect(checkClientPath('models/a b ü.onnx', 'modelPath', '/srv')).toBe('/srv/models/a b ü.onnx');
    expect(checkClientPath('/x/./y//z.onnx', 'modelPath', '/srv')).toBe('/x/y/z.onnx');
    expect(checkClientPath('/x/..y/z', 'modelPath', '/srv')).toBe('/x/..y/z');
    expect(() => checkClientPath('/x/../etc/passwd', 'modelPath')).toThrow(/modelPath: "\.\."/);
    expect(() => checkClientPath('..', 'outputPath')).toThrow(/outputPath/);
    expect(() => checkClientPath('a\\..\\b', 'modelPath')).toThrow(/"\.\."/);
    expect(() => checkClientPath('a\0b', 'modelPath')).toThrow(/NUL/);
    expect(() => checkClientPath('', 'modelPath')).toThrow(/empty/);
  });
});
