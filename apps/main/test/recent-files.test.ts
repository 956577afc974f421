import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RecentFiles } from '../recent-files.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'tbs-recent-'));

describe('recent files', () => {
  it('keeps the newest first, without duplicates, up to the limit, and tells the OS', async () => {
    const dir = tmp();
    const addToOs = vi.fn();
    const onChange = vi.fn();
    const r = new RecentFiles(path.join(dir, 'sub', 'recent.json'), { addToOs, onChange }, 3);
    await r.add('/m/a.onnx');
    await r.add('/m/b.onnx');
    await r.add('/m/a.onnx');
    await r.add('/m/c.onnx');
    expect(await r.add('/m/d.onnx')).toEqual(['/m/d.onnx', '/m/c.onnx', '/m/a.onnx']);
    expect(addToOs).toHaveBeenCalledTimes(5);
    expect(onChange).toHaveBeenLastCalledWith(['/m/d.onnx', '/m/c.onnx', '/m/a.onnx']);
    // Persisted, and read back by a fresh instance (the next start).
    expect(await new RecentFiles(path.join(dir, 'sub', 'recent.json')).get()).toEqual(['/m/d.onnx', '/m/c.onnx', '/m/a.onnx']);
    expect(readdirSync(path.join(dir, 'sub'))).toEqual(['recent.json']);
  });

  it('survives concurrent adds with a consistent file', async () => {
    const file = path.join(tmp(), 'recent.json');
    const r = new RecentFiles(file);
    await Promise.all(Array.from({ length: 20 }, (_, i) => r.add(`/m/${i}.onnx`)));
    const onDisk = JSON.parse(readFileSync(file, 'utf8')).files;
    expect(onDisk).toEqual(await r.get());
    expect(onDisk).toHaveLength(10);
  });

  it('starts empty from a missing, corrupt or wrongly shaped file, dropping bad entries', async () => {
    const dir = tmp();
    expect(await new RecentFiles(path.join(dir, 'none.json')).get()).toEqual([]);
    writeFileSync(path.join(dir, 'bad.json'), '{"files": [');
    expect(await new RecentFiles(path.join(dir, 'bad.json')).get()).toEqual([]);
    writeFileSync(path.join(dir, 'shape.json'), '[1,2]');
    expect(await new RecentFiles(path.join(dir, 'shape.json')).get()).toEqual([]);
    writeFileSync(path.join(dir, 'mixed.json'), JSON.stringify({ files: ['/ok.onnx', 3, 'relative.onnx', null] }));
    expect(await new RecentFiles(path.join(dir, 'mixed.json')).get()).toEqual(['/ok.onnx']);
  });

  it('removes an entry', async () => {
    const file = path.join(tmp(), 'recent.json');
    const r = new RecentFiles(file);
    await r.add('/a.onnx');
    await r.add('/b.onnx');
    await r.remove('/a.onnx');
    expect(JSON.parse(readFileSync(file, 'utf8')).files).toEqual(['/b.onnx']);
  });
});
