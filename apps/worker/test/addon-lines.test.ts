// The worker's wire form against the object form, through the real addon: every hot event's
// native JSON line (native/src/core/event_lines.h) is byte for byte JSON.stringify of the object
// BatchDecoder.decode makes from the same slots, every other event decodes as before, and a build
// in the wire form carries the same events as one without it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { EventLine, encodeEventLines, type WireEvent } from '../../shared/event-lines.js';
import { BuildOptions, type BuildEvent, type LayerInfo } from '../../shared/protocol.js';
import { BatchDecoder, loadNative, startBuild, startWireBuild, toNativeRequest } from '../addon.js';
import type { NativeBuildRequest } from '../native-api.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tbs-addon-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Names that need escaping, and one that is not ASCII, so the name text is checked too.
const NAMES = ['conv "a"', 'back\\slash', 'tab\there', 'ctl\u0001\u0008\u000c', 'naïve→層', 'plain'];
const layers: LayerInfo[] = Array.from({ length: 30 }, (_, i) => ({ name: `${NAMES[i % NAMES.length]}_${i}`, op: ['Conv', 'Relu', 'MatMul', 'Add'][i % 4] }));

function request(name: string, buildId = name): NativeBuildRequest {
  return {
    buildId,
    backend: 'simulated',
    modelPath: path.join(dir, `${name}.onnx`),
    outputPath: path.join(dir, `${name}.engine`),
    options: BuildOptions.parse({ backend: 'simulated', simDuration: 0.3, simSeed: 11 }),
    layers,
    simThreads: 3,
  };
}

describe('the addon writes the hot events as JSON text', () => {
  it('each line is JSON.stringify of the object decode() makes from the same slots', async () => {
    const native = loadNative();
    // A build id that needs escaping: the prefix comes from the decoder, the rest from the addon.
    const buildId = 'b"1\\x';
    const req = request('same', buildId);
    const objects = new BatchDecoder(buildId, { outputPath: req.outputPath, options: req.options });
    const wire = new BatchDecoder(buildId, { outputPath: req.outputPath, options: req.options });
    let hot = 0;
    let rare = 0;
    const mismatches: string[] = [];
    await new Promise<void>((resolve, reject) => {
      native.startBuild(
        toNativeRequest(req),
        (nums, strs, newNames, firstNameId, lines) => {
          try {
            expect(typeof lines).toBe('string');
            const want = objects.decode(nums, strs, newNames, firstNameId);
            const got = wire.decodeWire(nums, strs, newNames, firstNameId, lines);
            expect(got).toHaveLength(want.length);
            for (let i = 0; i < want.length; i++) {
              const g = got[i];
              if (g instanceof EventLine) {
                hot++;
                if (g.line !== JSON.stringify(want[i])) mismatches.push(`${g.line}\n  !== ${JSON.stringify(want[i])}`);
                expect(g.type).toBe(want[i].type);
                expect(g.id).toBe((want[i] as { id: number }).id);
              } else {
                rare++;
                expect(g).toEqual(want[i]);
              }
            }
            if (want.at(-1)?.type === 'build.finished') resolve();
          } catch (e) {
            reject(e as Error);
          }
        },
        wire.linePrefix(),
      );
    });
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(hot).toBeGreaterThan(100);
    expect(rare).toBeGreaterThanOrEqual(2); // build.started and build.finished at least
  });

  it('a build in the wire form carries the events of one without it', async () => {
    const collect = <E>(start: (r: NativeBuildRequest, on: (e: E[]) => void) => { result: Promise<unknown> }, r: NativeBuildRequest) => {
      const all: E[] = [];
      const h = start(r, (batch) => all.push(...batch));
      return h.result.then(() => all);
    };
    const plain = (await collect<BuildEvent>(startBuild, request('plain', 'same-id'))).map((e) => JSON.parse(JSON.stringify(e)) as BuildEvent);
    const wire = await collect<WireEvent>(startWireBuild, request('wire', 'same-id'));
    const parsed = encodeEventLines(wire).map((l) => JSON.parse(l) as BuildEvent);
    // Same seeded build, so the same phases with the same names and steps; times, ids (threads
    // race for them) and coalescing differ between runs, so compare what does not depend on them.
    const shape = (events: BuildEvent[]) => {
      const names = new Map<number, string>();
      const out: string[] = [];
      for (const e of events) {
        if (e.type === 'phase.start') {
          names.set(e.id, e.name);
          out.push(`start ${e.name} ${e.nbSteps}`);
        } else if (e.type === 'phase.finish') out.push(`finish ${names.get(e.id)} ${e.stepsDone} ${e.early}`);
      }
      return out.sort();
    };
    expect(shape(parsed)).toEqual(shape(plain));
    expect(parsed.at(-1)?.type).toBe('build.finished');
    expect(parsed.filter((e) => e.type === 'phase.start').length).toBeGreaterThan(layers.length);
  });
});
