// Build routes as TensorRT 11.1 defines them (NvInfer.h, IBuilderConfig::setBuildRoute and
// getAllBuildRoutes; trtexec README section 7):
//   - a ROUTE is a space-separated list of knob settings, each `-knob=value`, e.g.
//     `-conv_use_long_w=off -kgen:codegen:cuda_tile=2` (the header's own example);
//   - the library's knob database (getAllBuildRoutes() JSON) lists per knob its `option`
//     ("-conv_use_long_w"), `allowed_values` as a PATTERN ("-conv_use_long_w=[on|off]"),
//     `default_value` and `help`. The pattern is what trtexec's --tuneBuildRoutes iterates over;
//     it is never a route itself.
// Every surface (CLI, trtexec command, service validation for HTTP/MCP/LSP, the options form)
// parses and checks routes here, so they cannot disagree.
//
// The knob database is read as NVIDIA's own tuner reads it (trtexec 11.1, sampleTuning.cpp): the
// part of `allowed_values` between `[` and `]` lists alternatives separated by `|`, each trimmed of
// spaces and tabs (`-k=[a | b]` offers `a` and `b`); one holding `...` (`-k=[1...64]`) is a range,
// never a choice; anything else (`-k=int32_t`, a value that is not a string) leaves the knob
// unbounded. An entry is a knob as soon as it has a non-empty string `option`, whatever its
// `allowed_values` holds. An empty database (some builds list none) is "no routes", not an error.
// No real 11.1 library was run here: the range check (an integer from the low to the high end) is
// our reading of `[1...64]`; the library has the last word, as setBuildRoute refuses what it does
// not take.
import type { BackendInfo, BackendName } from './protocol.js';

/** A backend's build-route knob database, read when asked (BuildServiceApi.readBuildRoutes). */
export interface BuildRoutesRead {
  backend: BackendName;
  /** The TensorRT version the routes are for (the simulator's: the version it emulates). */
  version: string;
  /** getAllBuildRoutes()' JSON as the library returned it (apps/shared/build-routes.ts parses it). */
  json: string;
  /** Where it came from: just read from the library, the on-disk cache, or the simulator. */
  source: 'library' | 'disk cache' | 'simulated';
}

export interface RouteKnob {
  /** The knob as it is written in a route, with its leading dash: "-conv_use_long_w". */
  option: string;
  /** The allowed-values pattern as the library lists it: "-conv_use_long_w=[on|off]". */
  pattern: string;
  /** The alternatives the pattern lists (`[a|b|c]`); empty for a range or an unbounded knob. */
  values: string[];
  /** `[1...64]`: the route's value must be an integer from `min` to `max`. */
  range?: { min: number; max: number };
  defaultValue?: string;
  help?: string;
}

export interface KnobDatabase {
  tunerVersion?: string;
  knobs: RouteKnob[];
}

export interface RouteSetting {
  option: string;
  value: string;
}

export interface KnobPattern {
  option: string;
  values: string[];
  range?: { min: number; max: number };
}

/**
 * What an `allowed_values` text allows, as the tuner reads it: between the first `[` and the first
 * `]` after it, `a|b|c` (each trimmed; empty ones dropped) or a range `lo...hi`; no brackets, or a
 * `...` that is not two integers, allows any value (no values, no range).
 */
export function allowedOf(allowed: string): Pick<KnobPattern, 'values' | 'range'> {
  const open = allowed.indexOf('[');
  const close = open < 0 ? -1 : allowed.indexOf(']', open + 1);
  if (open < 0 || close < 0) return { values: [] };
  const inside = allowed.slice(open + 1, close);
  if (inside.includes('...')) {
    const r = /^[ \t]*(-?\d+)[ \t]*\.\.\.[ \t]*(-?\d+)[ \t]*$/.exec(inside);
    if (!r) return { values: [] };
    const min = Number(r[1]);
    const max = Number(r[2]);
    return Number.isSafeInteger(min) && Number.isSafeInteger(max) && min <= max ? { values: [], range: { min, max } } : { values: [] };
  }
  return {
    values: inside
      .split('|')
      .map((v) => v.replace(/^[ \t]+|[ \t]+$/g, ''))
      .filter((v) => v !== ''),
  };
}

/**
 * `-knob=[a|b|c]` → its knob and values (or range); a pattern of another form keeps its knob only,
 * as does a bare `-knob` (what a backend lists for an entry whose allowed values are not a string).
 */
export function parseKnobPattern(pattern: string): KnobPattern | null {
  const m = /^(-[^=\s]+)(?:=(.+))?$/.exec(pattern.trim());
  if (!m) return null;
  return { option: m[1], ...(m[2] === undefined ? { values: [] } : allowedOf(m[2])) };
}

/** The knob database from the patterns alone (what `BackendInfo.buildRoutes` lists). */
export function knobsFromPatterns(patterns: readonly string[]): KnobDatabase {
  const knobs: RouteKnob[] = [];
  for (const pattern of patterns) {
    const p = parseKnobPattern(pattern);
    if (p) knobs.push({ option: p.option, pattern, values: p.values, ...(p.range ? { range: p.range } : {}) });
  }
  return { knobs };
}

/**
 * getAllBuildRoutes()' JSON → knobs. Throws an Error naming what is wrong when the text is not
 * the documented shape (a `tuner_options` array of objects with `option` and `allowed_values`).
 */
export function parseKnobDatabase(json: string): KnobDatabase {
  // Some builds list no routes at all: that is an answer ("no routes"), not a malformed one.
  if (json.trim() === '') return { knobs: [] };
  let root: unknown;
  try {
    root = JSON.parse(json);
  } catch (e) {
    throw new Error(`the knob database is not JSON: ${(e as Error).message}`, { cause: e });
  }
  const r = root as { tuner_version?: unknown; tuner_options?: unknown };
  if (typeof r !== 'object' || r === null || !Array.isArray(r.tuner_options)) throw new Error('the knob database has no "tuner_options" array');
  const knobs: RouteKnob[] = [];
  for (const entry of r.tuner_options as unknown[]) {
    const e = entry as { option?: unknown; allowed_values?: unknown; default_value?: unknown; help?: unknown };
    // As the tuner: any entry with an option is a knob; what it allows comes from a string
    // allowed_values only (anything else leaves it unbounded).
    if (typeof e !== 'object' || e === null || Array.isArray(e) || typeof e.option !== 'string' || e.option === '') continue;
    const pattern = typeof e.allowed_values === 'string' ? e.allowed_values : '';
    const allowed = allowedOf(pattern);
    knobs.push({
      option: e.option.startsWith('-') ? e.option : `-${e.option}`,
      pattern,
      values: allowed.values,
      ...(allowed.range ? { range: allowed.range } : {}),
      ...(typeof e.default_value === 'string' ? { defaultValue: e.default_value } : {}),
      ...(typeof e.help === 'string' ? { help: e.help } : {}),
    });
  }
  return { ...(typeof r.tuner_version === 'string' ? { tunerVersion: r.tuner_version } : {}), knobs };
}

/**
 * The knob database a backend reports: the library's JSON (detail.buildRoutesJson) when it has
 * it, else the patterns of `buildRoutes`; undefined when the backend lists no routes.
 */
export function knobDatabaseOf(b: BackendInfo | undefined): KnobDatabase | undefined {
  const json = b?.detail?.buildRoutesJson;
  if (json) {
    try {
      return parseKnobDatabase(json);
    } catch {
      // fall back to the patterns
    }
  }
  return b?.buildRoutes ? knobsFromPatterns(b.buildRoutes) : undefined;
}

/**
 * `--helpBuildRoute=<knob>` as trtexec 11.1 answers it: the library's own `tuner_options` entries
 * whose `option` is `knob` (leading dash optional on either side), each kept whole with every
 * field it has, under the database's `tuner_version` when it has one; undefined when no entry
 * matches. Throws as parseKnobDatabase for text that is not a knob database. Without a knob,
 * trtexec prints the database verbatim: callers print the library's text, not this.
 */
export function knobEntriesJson(json: string, knob: string): string | undefined {
  parseKnobDatabase(json);
  if (json.trim() === '') return undefined;
  const root = JSON.parse(json) as { tuner_version?: unknown; tuner_options: unknown[] };
  const strip = (s: string) => s.replace(/^-/, '');
  const entries = root.tuner_options.filter((e) => {
    const option = (e as { option?: unknown } | null)?.option;
    return typeof option === 'string' && strip(option) === strip(knob);
  });
  if (entries.length === 0) return undefined;
  return JSON.stringify({ ...('tuner_version' in root ? { tuner_version: root.tuner_version } : {}), tuner_options: entries }, null, 2);
}

/** A value written as a set of choices (`[on|off]`): the pattern, not a setting. */
const looksLikePattern = (value: string) => value.startsWith('[') || value.includes('|');

/**
 * A route's settings, in order, and what is wrong with its syntax, one sentence per problem naming
 * the token (and the knob, when a pattern was given where a value belongs).
 */
export function parseRoute(route: string): { settings: RouteSetting[]; problems: string[] } {
  const settings: RouteSetting[] = [];
  const problems: string[] = [];
  const tokens = route
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');
  if (tokens.length === 0) problems.push('the route is empty: give knob settings such as -conv_use_long_w=off, or leave the route out');
  const seen = new Set<string>();
  for (const token of tokens) {
    const m = /^(-[^=\s]+)=(.*)$/.exec(token);
    if (!m || m[2] === '') {
      problems.push(`"${token}" is not a knob setting: each part of a route is -knob=value, e.g. -conv_use_long_w=off`);
      continue;
    }
    const [, option, value] = m;
    if (looksLikePattern(value)) {
      const first = /^\[?([^|\]]*)/.exec(value)?.[1] || 'value';
      problems.push(`knob ${option}: "${token}" is the knob's pattern of allowed values, not a route; choose one value, e.g. ${option}=${first}`);
      continue;
    }
    if (seen.has(option)) problems.push(`knob ${option} is set twice in the route`);
    seen.add(option);
    settings.push({ option, value });
  }
  return { settings, problems };
}

/**
 * Everything wrong with a route for a knob database, one sentence each, naming the bad knob or
 * value and what the library allows. Without a database (the library listed none) only the syntax
 * is checked: the library itself refuses what it does not know when the build starts.
 */
export function routeProblems(route: string, db: KnobDatabase | undefined, flag = 'buildRoute'): string[] {
  const { settings, problems } = parseRoute(route);
  const out = problems.map((p) => `${flag}: ${p}`);
  if (!db || db.knobs.length === 0) return out;
  const byOption = new Map(db.knobs.map((k) => [k.option, k]));
  for (const s of settings) {
    const knob = byOption.get(s.option);
    if (!knob) {
      out.push(`${flag}: unknown knob ${s.option}; this library's knobs: ${db.knobs.map((k) => k.option).join(', ')}`);
    } else if (knob.values.length > 0 && !knob.values.includes(s.value)) {
      out.push(`${flag}: knob ${s.option} does not take "${s.value}"; allowed: ${knob.pattern}`);
    } else if (knob.range && !inRange(s.value, knob.range)) {
      out.push(`${flag}: knob ${s.option} takes an integer from ${knob.range.min} to ${knob.range.max}, not "${s.value}"; allowed: ${knob.pattern}`);
    }
  }
  return out;
}

function inRange(value: string, range: { min: number; max: number }): boolean {
  if (!/^-?\d+$/.test(value)) return false;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= range.min && n <= range.max;
}

/** A route from one chosen value per knob, in the database's order; unchosen knobs are left out. */
export function composeRoute(choices: Readonly<Record<string, string>>, db: KnobDatabase): string {
  return db.knobs
    .filter((k) => (choices[k.option] ?? '') !== '')
    .map((k) => `${k.option}=${choices[k.option]}`)
    .join(' ');
}

/** The choice per knob a route makes (for a form that shows one choice per knob). */
export function routeChoices(route: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of parseRoute(route).settings) out[s.option] = s.value;
  return out;
}
