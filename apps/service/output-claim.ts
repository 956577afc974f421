// Which build, of which process, is writing an output file: a claim that holds across processes
// (a CLI `build` and a `serve`, two CLIs), so that two builds naming one engine never run at once.
// Without it the one that ends later could clean up over the other's engine, and both write
// temp + rename into the same path. Within one process build-session.ts refuses the second build
// itself; this is the same refusal between processes.
//
// One file per output in the user's private state folder (`<state>/output-claims/<sha256 of the
// real path>.claim`), never beside the engine (the files there are the build's own). Node has no
// flock, and the service may not load the addon (tools/rooms.json), so a claim is a file created
// atomically (written whole to a temp file, then hard-linked into place: link fails if the name
// exists, and a reader never sees half a claim) that names its holder: the process's pid and
// start time, and the worker's. A claim whose holder and worker are both gone (killed, crashed:
// no release ran) is stale and taken over, so a killed CLI never blocks the next build; on Linux
// a pid reused by another program does not keep it alive (its start time differs; elsewhere such
// a claim stands until that program ends). A claim from another host (a home folder shared over
// NFS) cannot be checked and stands: the refusal names the host.
//
// A worker killed mid-build (with its holder: no clean-up ran) leaves its temp file beside the
// engine (`<engine>.tmp-<worker pid>-<n>`, atomic_file.cc; the TensorRT adapter holds it open for
// the whole build). The holder records in its claim the device:inode of each such file its watch
// sees (build-session.ts); the process that takes over the stale claim removes them
// (removeLeftTemps): files of exactly that name, regular, of this user, with one link, of a
// worker that is not running, and, when the claim recorded identities, one of those. The holder's
// own temps (a stored engine being placed, its manifest being written) go by the same rules, known
// by their names and the holder's pid.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { displayText } from '../shared/display-text.js';
import { layersPathFor, manifestPathFor } from '../shared/engine-manifest.js';
import { stateDir } from './build-profiles.js';
import { ensurePrivateDir } from './private-dir.js';
import { isTempName, removeOwnFiles, tempPrefix } from './temp-files.js';

export interface ClaimHolder {
  v: 1;
  /** Unique to one claim: its release removes that claim and nothing that replaced it. */
  nonce: string;
  buildId: string;
  /** The output file, a link resolved. */
  target: string;
  host: string;
  pid: number;
  /** Linux: the process's start time (/proc/<pid>/stat field 22); absent elsewhere. */
  start?: string;
  /** What the process is (`trt-build-studio serve`), for the refusal. */
  command: string;
  /** The build's worker, which may outlive its host for a moment (it cancels when orphaned). */
  workerPid?: number;
  workerStart?: string;
  /**
   * Device:inode (`<dev>:<ino>`) of the worker's temp files beside the target that the holder's
   * watch saw; an empty list: watched, none seen. Absent: not watched (no watch could be set up, or
   * it failed, or an older claim), so a taker knows them by name, owner and kind alone.
   */
  temps?: string[];
}

/** At most this many temp identities are kept in a claim (a worker writes one engine). */
const MAX_TEMPS = 64;

/** The folder of claims: `<state folder>/output-claims`. */
export function claimDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'output-claims');
}

/** The claim file of `target` (a real path) in `dir`. */
export function claimFile(dir: string, target: string): string {
  return path.join(dir, `${crypto.createHash('sha256').update(target).digest('hex').slice(0, 40)}.claim`);
}

/** Linux: field 22 of /proc/<pid>/stat (start time in clock ticks since boot), with the state; undefined elsewhere. */
function procStat(pid: number): { start: string; zombie: boolean } | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { start: rest[19] ?? '', zombie: rest[0] === 'Z' || rest[0] === 'X' };
  } catch {
    return undefined;
  }
}

export function processStart(pid: number): string | undefined {
  return procStat(pid)?.start;
}

/** Process `pid` runs and, when `start` is known, is the one that started then (not a reused pid). */
export function processAlive(pid: number, start: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: gone
  }
  const st = procStat(pid);
  // Vanished between the two looks; or no /proc to ask (not Linux, or not mounted): kill's word stands.
  if (!st) return procStat(process.pid) === undefined;
  if (st.zombie) return false;
  return start === undefined || st.start === start;
}

/** Nonces of the claims this process holds now (a claim naming this process and not here is a leftover). */
const heldHere = new Set<string>();

/** The holder's process or its worker still runs: the claim stands. Another host's cannot be checked: it stands. */
function holderAlive(h: ClaimHolder): boolean {
  if (h.host !== os.hostname()) return true;
  if (h.pid === process.pid && h.start === processStart(process.pid)) return heldHere.has(h.nonce);
  if (processAlive(h.pid, h.start)) return true;
  return h.workerPid !== undefined && processAlive(h.workerPid, h.workerStart);
}

function parseHolder(text: string): ClaimHolder | undefined {
  try {
    const h = JSON.parse(text) as Partial<ClaimHolder>;
    const str = (v: unknown) => typeof v === 'string';
    const pid = (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0;
    if (h.v !== 1 || !str(h.nonce) || !str(h.buildId) || !str(h.target) || !str(h.host) || !pid(h.pid) || !str(h.command)) return undefined;
    if ((h.start !== undefined && !str(h.start)) || (h.workerPid !== undefined && !pid(h.workerPid)) || (h.workerStart !== undefined && !str(h.workerStart))) return undefined;
    // A list not of this form (another version's) decides nothing about the claim itself; it only
    // means no file is known to be the worker's.
    if (h.temps !== undefined && !(Array.isArray(h.temps) && h.temps.length <= MAX_TEMPS && h.temps.every((t) => typeof t === 'string' && /^\d+:\d+$/.test(t)))) h.temps = [];
    return h as ClaimHolder;
  } catch {
    return undefined;
  }
}

/** The claim file's bytes, or undefined when there is none. */
function readBytes(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** `text` written whole to a fresh temp file beside `file` (0600); returns its path. */
function writeTemp(file: string, text: string): string {
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  return tmp;
}

function unlinkQuiet(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // Gone already.
  }
}

/**
 * Removes the stale claim whose bytes were `seen`, and nothing else: it is moved aside first and
 * compared; a claim that replaced it meanwhile (another process broke the stale one and claimed)
 * is linked back under its name, with its inode and bytes, for its holder to release. True when
 * this call removed that very claim (so its leftovers are this caller's to remove).
 */
function breakStale(file: string, seen: string): boolean {
  const aside = `${file}.stale-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(file, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const removed = readBytes(aside) === seen;
  if (!removed) {
    try {
      fs.linkSync(aside, file);
    } catch {
      // A third claimer took the free name in the moment between: the rarest race (a dead
      // holder's claim broken by three processes at once); the newest claim stands.
    }
  }
  unlinkQuiet(aside);
  return removed;
}

/**
 * The temp files that stale claim `h`'s build left beside `target` (its worker and its holder were
 * killed, so nobody removed them), removed; nothing else is. Whose they are is told by their names
 * and, for the worker's, by the identities the holder recorded:
 * - the worker's engine temp, `<basename>.tmp-<worker pid>-<digits>` (the native layer's, created
 *   O_EXCL); when the claim recorded the identities its holder saw, its device:inode must be one of
 *   them (otherwise the file is not known to be that worker's, whatever its name);
 * - the holder's own temps, written by the service in that process (engine-reuse.ts places a stored
 *   engine and its layer file, engine-manifest-file.ts writes the manifest):
 *   `<basename>.tmp-<holder pid>-reuse-<digits>`, `<basename>.layers.json.tmp-<holder pid>-reuse-<digits>`
 *   and `<basename>.manifest.json.tmp-<holder pid>-<digits>`.
 * A file goes only when, besides, it is a regular file itself (a link is not followed), of this
 * user, with one link, and the pid in its name runs no process now (a reused pid may be a new
 * build's). Failures are warnings: the claim is taken all the same.
 */
function removeLeftTemps(target: string, h: ClaimHolder, onWarning?: (message: string) => void): void {
  if (h.target !== target || h.host !== os.hostname()) return;
  const base = path.basename(target);
  const kinds: Array<{ prefix: string; known?: Set<string> }> = [];
  if (h.workerPid !== undefined && !processAlive(h.workerPid, undefined)) kinds.push({ prefix: tempPrefix(base, h.workerPid), known: h.temps ? new Set(h.temps) : undefined });
  if (!processAlive(h.pid, undefined)) {
    for (const prefix of [tempPrefix(base, h.pid, 'reuse'), tempPrefix(layersPathFor(base), h.pid, 'reuse'), tempPrefix(manifestPathFor(base), h.pid)]) kinds.push({ prefix });
  }
  if (kinds.length === 0) return;
  const kindOf = (name: string) => kinds.find((k) => isTempName(name, k.prefix));
  removeOwnFiles(
    path.dirname(target),
    (name) => kindOf(name) !== undefined,
    (p, e) => onWarning?.(`could not remove ${p}, left by the killed build ${displayText(h.buildId)}: ${(e as Error).message}`),
    (name, st) => {
      const known = kindOf(name)!.known;
      return st.nlink === 1 && (!known || known.has(`${st.dev}:${st.ino}`));
    },
  );
}

/** The process's own description for a refusal: the program and its subcommand. */
function describeSelf(): string {
  const prog = path.basename(process.argv[1] ?? process.argv0).replace(/\.(c|m)?js$/, '');
  const sub = process.argv[2];
  return sub && !sub.startsWith('-') ? `${prog} ${sub}` : prog;
}

/** One line naming the holder: `b3-1a2b3c of trt-build-studio serve, pid 1234`. */
export function describeHolder(h: ClaimHolder): string {
  const where = h.host !== os.hostname() ? ` on ${h.host}` : '';
  return displayText(`${h.buildId} of ${h.command}, pid ${h.pid}${where}`);
}

export class OutputClaim {
  private released = false;

  constructor(
    readonly file: string,
    private holder: ClaimHolder,
  ) {
    heldHere.add(holder.nonce);
  }

  /** Names the worker in the claim, so that it holds while an orphaned worker winds down. */
  setWorker(pid: number): void {
    this.rewrite({ ...this.holder, workerPid: pid, workerStart: processStart(pid) });
  }

  /**
   * The holder watches the worker's temp files from now on (`watching`, with none seen yet), or
   * no longer can (a taker then knows them by name alone).
   */
  watchTemps(watching: boolean): void {
    const next: ClaimHolder = { ...this.holder, temps: [] };
    if (!watching) delete next.temps;
    this.rewrite(next);
  }

  /** Records the device:inode of a temp file of the worker, seen while watching. */
  addTemp(id: string): void {
    const temps = this.holder.temps;
    if (!temps || temps.includes(id)) return;
    // Past the limit nothing more is known for sure: the name rule alone.
    if (temps.length >= MAX_TEMPS) return this.watchTemps(false);
    this.rewrite({ ...this.holder, temps: [...temps, id] });
  }

  /**
   * The claim file, replaced whole (temp + rename) with `next`; left as it was when that fails
   * (naming the host process alone, or fewer temps), and `next` goes with the next rewrite.
   */
  private rewrite(next: ClaimHolder): void {
    if (this.released) return;
    this.holder = next;
    let tmp: string | undefined;
    try {
      tmp = writeTemp(this.file, JSON.stringify(next));
      fs.renameSync(tmp, this.file);
    } catch {
      if (tmp) unlinkQuiet(tmp);
    }
  }

  /** Removes the claim if it is still this one (never a claim that replaced it). */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldHere.delete(this.holder.nonce);
    try {
      const now = parseHolder(readBytes(this.file) ?? '');
      if (now?.nonce === this.holder.nonce) fs.unlinkSync(this.file);
    } catch {
      // Unreadable or gone: a claim naming this process and not held here counts as stale anyway.
    }
  }
}

/** `p` with a symbolic link resolved (a claim is on the file written); `p` itself when it cannot be. */
export function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

export type ClaimResult = { ok: true; claim: OutputClaim } | { ok: false; holder: ClaimHolder };

/**
 * Claims `target` (the output file, a link resolved) for build `buildId` of this process, or says
 * who holds it. A stale claim taken over has its dead worker's temp files removed
 * (removeLeftTemps); what could not be is told to `onWarning`. Throws when the claim folder
 * cannot be used (not private, not writable).
 */
export function claimOutput(target: string, buildId: string, dir: string = claimDir(), onWarning?: (message: string) => void): ClaimResult {
  ensurePrivateDir(dir, 'output claim');
  const file = claimFile(dir, target);
  const mine: ClaimHolder = {
    v: 1,
    nonce: crypto.randomBytes(12).toString('hex'),
    buildId,
    target,
    host: os.hostname(),
    pid: process.pid,
    ...(processStart(process.pid) !== undefined ? { start: processStart(process.pid) } : {}),
    command: describeSelf(),
  };
  const text = JSON.stringify(mine);
  // Each round either claims, finds a live holder, or removes a stale claim; a few rounds cover
  // claims that come and go meanwhile.
  for (let round = 0; round < 8; round++) {
    const tmp = writeTemp(file, text);
    try {
      fs.linkSync(tmp, file);
      return { ok: true, claim: new OutputClaim(file, mine) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkQuiet(tmp);
    }
    const seen = readBytes(file);
    if (seen === undefined) continue; // released meanwhile
    const holder = parseHolder(seen);
    if (holder && holderAlive(holder)) return { ok: false, holder };
    // Its holder is gone (or it is not a claim at all: nothing of a build's can be lost with it).
    // Whoever removed the stale claim removes what its worker left, at once: a claimer that
    // comes first now runs a worker of another pid (a live pid is never touched).
    if (breakStale(file, seen) && holder) removeLeftTemps(target, holder, onWarning);
  }
  throw new Error(`the claim ${file} on ${target} kept changing while it was taken; try again`);
}
