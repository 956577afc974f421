// Where a running studio (`serve`, the desktop app) says it is, so `watch` and the drop-in
// monitors find it without flags (docs/watch.md, "Finding the studio"): one file per studio,
// `studio-<pid>.json`, in $XDG_RUNTIME_DIR/trt-build-studio/ (else /tmp/trt-build-studio-<uid>/),
// holding its address, its API token and its probe socket. The token is a key to the studio, so
// the folder must be this user's alone (0700) and each file too (0600): a reader refuses a folder
// or file another user owns or whose mode lets anyone else in, rather than trust or leak it.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';

export const StudioEntry = z.object({
  v: z.literal(1),
  pid: z.number().int().positive(),
  /** The HTTP API (serve); the desktop app, MCP and LSP have none: their watched builds come through the socket. */
  url: z.string().url().optional(),
  token: z.string().optional(),
  probeSocket: z.string().min(1),
  /** Which surface: `mcp` and `lsp` are the stdio servers (an agent's, an editor's), studios too. */
  kind: z.enum(['serve', 'desktop', 'mcp', 'lsp']),
});
export type StudioEntry = z.infer<typeof StudioEntry>;

const myUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** The registry folder: $XDG_RUNTIME_DIR/trt-build-studio, else /tmp/trt-build-studio-<uid>. */
export function registryDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'trt-build-studio');
  return path.join('/tmp', `trt-build-studio-${myUid() ?? 'user'}`);
}

/** Why `p` (folder or file) may not be trusted with a token, or undefined when it is private. */
export function notOurs(p: string, kind: 'folder' | 'file'): string | undefined {
  const me = myUid();
  const st = fs.lstatSync(p);
  if (st.isSymbolicLink()) return `${p} is a symbolic link; the studio registry uses only a real ${kind}`;
  if (kind === 'folder' ? !st.isDirectory() : !st.isFile()) return `${p} is not a ${kind}`;
  if (me !== undefined && st.uid !== me) return `${p} belongs to another user (uid ${st.uid}); refused (remove it, it is created again, private)`;
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
    return `${p} is open to other users (mode ${mode}); refused (run chmod ${kind === 'folder' ? 700 : 600} ${p})`;
  }
  return undefined;
}

/** Socket files of studios whose process is gone (a studio killed before it could clean up). */
export function removeStaleSockets(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const m = /^probe-(\d+)\.sock$/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
    } catch {
      // Gone already.
    }
  }
}

/** Creates the registry folder (0700) or checks the existing one; throws saying why it is refused. */
export function ensureRegistryDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = registryDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const why = notOurs(dir, 'folder');
  if (why) throw new Error(`studio registry: ${why}`);
  return dir;
}

/** The probe socket a studio of process `pid` listens on, in the registry folder. */
export function probeSocketPath(dir: string, pid = process.pid): string {
  return path.join(dir, `probe-${pid}.sock`);
}

export interface Published {
  file: string;
  /** Removes the file (also done on process exit). */
  remove(): void;
}

/**
 * Publishes this process as a studio: written to a temp file (0600) and renamed into place, so a
 * reader never sees half of it; removed when the process exits.
 */
export function publishStudio(entry: Omit<StudioEntry, 'v' | 'pid'>, env: NodeJS.ProcessEnv = process.env): Published {
  const dir = ensureRegistryDir(env);
  const full: StudioEntry = { v: 1, pid: process.pid, ...entry };
  const file = path.join(dir, `studio-${process.pid}.json`);
  const tmp = `${file}.tmp-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, `${JSON.stringify(full)}\n`, { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', remove);
    try {
      fs.unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  process.on('exit', remove);
  return { file, remove };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface FoundStudios {
  /** Live studios, newest file first. */
  studios: StudioEntry[];
  /** Folders or files refused, one line each (say them: a user wonders why no studio was found). */
  refused: string[];
}

/** The live studios published in the registry folder (none when the folder is missing). */
export function findStudios(env: NodeJS.ProcessEnv = process.env): FoundStudios {
  const dir = registryDir(env);
  const out: FoundStudios = { studios: [], refused: [] };
  try {
    const why = notOurs(dir, 'folder');
    if (why) {
      out.refused.push(why);
      return out;
    }
  } catch {
    return out; // no folder: no studio
  }
  const found: Array<{ e: StudioEntry; mtime: number }> = [];
  for (const name of fs.readdirSync(dir)) {
    if (!/^studio-\d+\.json$/.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const why = notOurs(file, 'file');
      if (why) {
        out.refused.push(why);
        continue;
      }
      const e = StudioEntry.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      if (!e.success) {
        out.refused.push(`${file} is not a studio entry`);
        continue;
      }
      if (!alive(e.data.pid)) continue;
      found.push({ e: e.data, mtime: fs.statSync(file).mtimeMs });
    } catch {
      // Removed while listing: that studio is gone.
    }
  }
  out.studios = found.sort((a, b) => b.mtime - a.mtime).map((f) => f.e);
  return out;
}
