// What trtexec does with --dumpLayerInfo and --exportLayerInfo after a build, for both commands
// that build (`trtexec` with trtexec's spelling, `build` with its own): the layer information is
// the `<engine>.layers.json` every build writes (IEngineInspector's JSON on TensorRT, the
// simulator's in the same format), so the export is TensorRT's format byte for byte.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { layersPathFor } from '../shared/engine-manifest.js';

export interface LayerInfoRequest {
  /** Print the layer information after the build (on stderr with --json, whose stdout is NDJSON). */
  dump: boolean;
  /** Copy it to this file, atomically. */
  exportPath?: string;
}

/** How the calling command names itself and its two flags in messages. */
export interface LayerInfoWords {
  command: string;
  dumpFlag: string;
  exportFlag: string;
}

/**
 * After a successful build: print and/or export the engine's layer information. No layer file
 * (TensorRT could not give one; the build log says why) or an unwritable target is exit 1 naming
 * the flag; nothing half-written is left at the target.
 */
export function layerInfoAfterBuild(enginePath: string | undefined, info: LayerInfoRequest, json: boolean, words: LayerInfoWords): number {
  if (!enginePath || (!info.dump && info.exportPath === undefined)) return 0;
  const source = layersPathFor(enginePath);
  let text: string;
  try {
    text = fs.readFileSync(source, 'utf8');
  } catch {
    const flag = info.exportPath !== undefined ? words.exportFlag : words.dumpFlag;
    process.stderr.write(`trt-build-studio ${words.command}: ${flag}: the build wrote no layer information (${source}); see the build log\n`);
    return 1;
  }
  if (info.dump) (json ? process.stderr : process.stdout).write(text.endsWith('\n') ? text : `${text}\n`);
  if (info.exportPath !== undefined) {
    const target = path.resolve(info.exportPath);
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
    let created = false;
    try {
      // 'wx': the temp file is this process's own, so only what it created is removed on failure.
      fs.writeFileSync(temp, text, { flag: 'wx' });
      created = true;
      fs.renameSync(temp, target);
    } catch (e) {
      if (created) fs.rmSync(temp, { force: true });
      process.stderr.write(`trt-build-studio ${words.command}: ${words.exportFlag}: cannot write ${target}: ${(e as Error).message}\n`);
      return 1;
    }
    if (!json) process.stderr.write(`trt-build-studio ${words.command}: layer information written to ${target}\n`);
  }
  return 0;
}
