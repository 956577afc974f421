// Plugin libraries on the desktop (issue 38 item 2): the worker loads them as code, so the page
// never names one. The user picks each in main's own dialog for a model; main remembers the picks
// per model in <userData>/plugin-libraries.json (written atomically, by main alone), and a build
// may name only libraries picked for its model. A missing or corrupt file means no picks, never a
// failed start.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PLUGIN_OPTION_NAMES, type PluginLibraryLists, type PluginOption } from '../shared/build-client.js';
import type { BuildOptions } from '../shared/protocol.js';
import { ServiceError } from '../service/api.js';
import { writeFileAtomic } from './atomic-file.js';

/** Models whose picks are kept; the least recently changed go first. */
export const PLUGIN_CHOICES_MAX_MODELS = 200;

const AbsPath = z.string().refine((p) => path.isAbsolute(p) && !p.includes('\0'));
const Lists = z.object({ staticPlugins: z.array(AbsPath), dynamicPlugins: z.array(AbsPath), pluginsToSerialize: z.array(AbsPath) }).partial();
const FileSchema = z.object({ version: z.literal(1), models: z.record(AbsPath, Lists) });

const empty = (): PluginLibraryLists => ({ staticPlugins: [], dynamicPlugins: [], pluginsToSerialize: [] });

export class PluginChoices {
  private models: Map<string, PluginLibraryLists> | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  /** `file`: where the picks are kept; none keeps them for this session only. */
  constructor(private readonly file?: string) {}

  /** The libraries picked for a model, by option. */
  get(modelPath: string): Promise<PluginLibraryLists> {
    return this.serial(async () => copy((await this.load()).get(key(modelPath)) ?? empty()));
  }

  /** Adds libraries the user just picked in main's dialog (never a path the page sent). */
  add(modelPath: string, option: PluginOption, files: readonly string[]): Promise<PluginLibraryLists> {
    return this.change(modelPath, (lists) => {
      for (const f of files.map((x) => path.resolve(x))) if (!lists[option].includes(f)) lists[option].push(f);
    });
  }

  remove(modelPath: string, option: PluginOption, file: string): Promise<PluginLibraryLists> {
    return this.change(modelPath, (lists) => {
      lists[option] = lists[option].filter((f) => f !== path.resolve(file));
    });
  }

  /**
   * Refuses a build whose options name a plugin library not picked for its model under that
   * option: the page may repeat main's picks, never add to them.
   */
  async check(modelPath: string, options: Pick<BuildOptions, PluginOption> | undefined): Promise<void> {
    if (!options || PLUGIN_OPTION_NAMES.every((o) => !options[o]?.length)) return;
    const picked = await this.get(modelPath);
    for (const option of PLUGIN_OPTION_NAMES) {
      (options[option] ?? []).forEach((p, i) => {
        if (typeof p === 'string' && path.isAbsolute(p) && picked[option].includes(path.resolve(p))) return;
        throw new ServiceError(
          'bad_input',
          `${option}[${i}]: ${p} was not picked for this model: plugin libraries are code, so on the desktop they are chosen with "Add…" beside the option, never typed.`,
        );
      });
    }
  }

  private change(modelPath: string, edit: (lists: PluginLibraryLists) => void): Promise<PluginLibraryLists> {
    return this.serial(async () => {
      const models = await this.load();
      const k = key(modelPath);
      const lists = copy(models.get(k) ?? empty());
      edit(lists);
      models.delete(k);
      if (PLUGIN_OPTION_NAMES.some((o) => lists[o].length > 0)) models.set(k, lists);
      while (models.size > PLUGIN_CHOICES_MAX_MODELS) models.delete(models.keys().next().value!);
      await this.save(models);
      return copy(lists);
    });
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op, op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async save(models: Map<string, PluginLibraryLists>): Promise<void> {
    if (!this.file) return;
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, `${JSON.stringify({ version: 1, models: Object.fromEntries(models) }, null, 2)}\n`);
  }

  private async load(): Promise<Map<string, PluginLibraryLists>> {
    if (this.models) return this.models;
    this.models = new Map();
    if (!this.file) return this.models;
    try {
      const parsed = FileSchema.safeParse(JSON.parse(await fs.readFile(this.file, 'utf8')));
      if (parsed.success) for (const [m, l] of Object.entries(parsed.data.models)) this.models.set(key(m), { ...empty(), ...l });
    } catch {
      // Missing or unreadable: no picks yet.
    }
    return this.models;
  }
}

const key = (modelPath: string) => path.resolve(modelPath);
const copy = (l: PluginLibraryLists): PluginLibraryLists => ({
  staticPlugins: [...l.staticPlugins],
  dynamicPlugins: [...l.dynamicPlugins],
  pluginsToSerialize: [...l.pluginsToSerialize],
});
