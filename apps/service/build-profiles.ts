// Where the profiles of finished builds live between runs, so that the next build of the same
// model with the same options and backend can say when it will end (apps/shared/build-estimate.ts).
// One small JSON file in the user's state directory, bounded (a few profiles per build kind, a
// bounded number of kinds), replaced atomically so a crash never leaves half a file. A file that
// cannot be read is treated as empty: predictions are a convenience, never a reason to fail.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BuildProfile } from '../shared/build-estimate.js';
import type { BuildOptions, ModelSummary } from '../shared/protocol.js';
import { ensurePrivateDir } from './private-dir.js';
import { homeDir, xdgDir } from './user-dirs.js';

/** Profiles kept per build kind: the most recent ones (a warm cache changes the shape). */
export const PROFILES_PER_KIND = 3;
/** Build kinds kept; the least recently used go first. */
export const MAX_KINDS = 200;

const FILE_VERSION = 1;

interface Stored {
  v: number;
  kinds: Record<string, { usedAt: number; profiles: BuildProfile[] }>;
}

/**
 * The user's state directory for this app: TBS_STATE_DIR, else $XDG_STATE_HOME (or
 * ~/.local/state) on Linux, Application Support on macOS, %LOCALAPPDATA% on Windows.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TBS_STATE_DIR) return path.resolve(env.TBS_STATE_DIR);
  const home = homeDir();
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'trt-build-studio');
  if (process.platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'trt-build-studio');
  return path.join(xdgDir(env, 'XDG_STATE_HOME', path.join('.local', 'state')), 'trt-build-studio');
}

/**
 * The timing cache a build starts from: none, cold (the file is missing or empty: every tactic
 * will be timed) or warm (it holds entries). A warm cache makes tactic timing, the longest part
 * of a real build, many times shorter, so builds from a cold and a warm cache do not predict
 * each other.
 */
export type TimingCacheState = 'none' | 'cold' | 'warm';

export function timingCacheState(cachePath: string | undefined): TimingCacheState {
  if (cachePath === undefined) return 'none';
  try {
    const st = fs.statSync(cachePath);
    return st.isFile() && st.size > 0 ? 'warm' : 'cold';
  } catch {
    return 'cold';
  }
}

/**
 * What makes two builds "the same" for prediction: the model's content as the summary describes
 * it (not its path: a copied model predicts too), every build option that shapes the work, the
 * backend with its version, and whether the timing cache starts cold or warm. Output paths, the
 * cache's path and time budgets do not change the build.
 */
export function buildKind(input: {
  backend: string;
  backendVersion: string;
  model: Pick<ModelSummary, 'fileBytes' | 'graphName' | 'nodeCount' | 'opHistogram' | 'inputs' | 'outputs'>;
  options: BuildOptions;
  /** Defaults to what the cache file holds now. */
  cache?: TimingCacheState;
}): string {
  const { backend: _choice, timingCache, ...shaping } = input.options;
  const canonical = JSON.stringify({
    backend: input.backend,
    backendVersion: input.backendVersion,
    model: [input.model.fileBytes, input.model.graphName, input.model.nodeCount, sortKeys(input.model.opHistogram), input.model.inputs, input.model.outputs],
    options: sortKeys(shaping as Record<string, unknown>),
    // Whether a cache is used, and whether it starts warm, matters; which file it is does not.
    timingCache: input.cache ?? timingCacheState(timingCache),
  });
  return crypto.createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

function sortKeys<T extends Record<string, unknown>>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export class BuildProfileStore {
  readonly file: string;

  constructor(dir: string = stateDir()) {
    this.file = path.join(dir, 'build-profiles.json');
  }

  /** The stored profiles of a build kind, most recent last; [] when none or unreadable. */
  profiles(kind: string): BuildProfile[] {
    return this.read().kinds[kind]?.profiles ?? [];
  }

  /** Every stored profile, of every kind (phase shares are learned across models). */
  allProfiles(): BuildProfile[] {
    return Object.values(this.read().kinds).flatMap((k) => k.profiles);
  }

  /** Adds a finished build's profile (keeps the last PROFILES_PER_KIND) and saves atomically. */
  add(kind: string, profile: BuildProfile, now = Date.now()): void {
    const data = this.read();
    const entry = data.kinds[kind] ?? { usedAt: now, profiles: [] };
    entry.usedAt = now;
    entry.profiles = [...entry.profiles, profile].slice(-PROFILES_PER_KIND);
    data.kinds[kind] = entry;
    const names = Object.keys(data.kinds);
    if (names.length > MAX_KINDS) {
      names.sort((a, b) => data.kinds[a].usedAt - data.kinds[b].usedAt);
      for (const k of names.slice(0, names.length - MAX_KINDS)) delete data.kinds[k];
    }
    this.write(data);
  }

  private read(): Stored {
    try {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Stored;
      if (parsed && parsed.v === FILE_VERSION && parsed.kinds && typeof parsed.kinds === 'object') return parsed;
    } catch {
      // Missing or unreadable: no history yet (or a file from elsewhere); start over.
    }
    return { v: FILE_VERSION, kinds: {} };
  }

  private write(data: Stored): void {
    ensurePrivateDir(path.dirname(this.file), 'state');
    const tmp = `${this.file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
    try {
      fs.writeFileSync(tmp, JSON.stringify(data));
      fs.renameSync(tmp, this.file);
    } catch (e) {
      fs.rmSync(tmp, { force: true });
      throw e;
    }
  }
}
