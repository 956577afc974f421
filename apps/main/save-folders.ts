// The folder each kind of save dialog opens in: where the user last saved that kind of file.
// Since Electron 43 the dialogs no longer remember it themselves, so every save would otherwise
// start in ~/Documents. Kept in <userData>/settings.json (written atomically); a missing or
// corrupt file, or a remembered folder that is gone, means the fallback folder.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { updateSettings } from './settings-file.js';

/** `pluginLibrary`: an open dialog, but it too starts where the user last picked one. */
export type SaveKind = 'engine' | 'timingCache' | 'pluginLibrary';

const Settings = z.object({ lastSaveFolder: z.record(z.string(), z.string()).optional() }).passthrough();
type Settings = z.infer<typeof Settings>;

export class SaveFolders {
  constructor(
    private readonly file: string,
    private readonly fallback: string,
  ) {}

  /** The folder to open the dialog in for `kind`. */
  async folder(kind: SaveKind): Promise<string> {
    const remembered = (await this.load()).lastSaveFolder?.[kind];
    if (remembered && path.isAbsolute(remembered)) {
      const st = await fs.stat(remembered).catch(() => null);
      if (st?.isDirectory()) return remembered;
    }
    return this.fallback;
  }

  /** Remembers the folder of a file the user just chose to save to. */
  remember(kind: SaveKind, chosenFile: string): Promise<void> {
    // Shared file (settings-file.ts): other modules keep their own keys in it.
    return updateSettings(this.file, (s) => {
      const parsed = Settings.safeParse(s);
      const previous = parsed.success ? parsed.data.lastSaveFolder : undefined;
      s.lastSaveFolder = { ...previous, [kind]: path.dirname(path.resolve(chosenFile)) };
    });
  }

  private async load(): Promise<Settings> {
    try {
      const parsed = Settings.safeParse(JSON.parse(await fs.readFile(this.file, 'utf8')));
      return parsed.success ? parsed.data : {};
    } catch {
      return {};
    }
  }
}
