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
// Assumed, not observed (no real 11.1 library was run here): allowed values are always written
// `-knob=[v1|v2|…]` as in the header example; a pattern in any other form is kept as it is and
// its knob accepts any single value (the library then has the last word, as setBuildRoute returns
// false for a value it refuses).
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
  /** The values the pattern lists; empty when the pattern is not of the `[a|b|c]` form. */
  values: string[];
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

/** `-knob=[a|b|c]` → its knob and values; a pattern of another form keeps its knob and no values. */
export function parseKnobPattern(pattern: string): { option: string; values: string[] } | null {
  const m = /^(-[^=\s]+)=(\S+)$/.exec(pattern.trim());
  if (!m) return null;
  const list = /^\[([^\]]*)\]$/.exec(m[2]);
  return { option: m[1], values: list ? list[1].split('|').filter((v) => v !== '') : [] };
}

/** The knob database from the patterns alone (what `BackendInfo.buildRoutes` lists). */
export function knobsFromPatterns(patterns: readonly string[]): KnobDatabase {
  const knobs: RouteKnob[] = [];
  for (const pattern of patterns) {
    const p = parseKnobPattern(pattern);
    if (p) knobs.push({ option: p.option, pattern, values: p.values });
  }
  return { knobs };
}

/**
 * getAllBuildRoutes()' JSON → knobs. Throws an Error naming what is wrong when the text is not
 * the documented shape (a `tuner_options` array of objects with `option` and `allowed_values`).
 */
export function parseKnobDatabase(json: string): KnobDatabase {
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
    if (typeof e !== 'object' || e === null || typeof e.option !== 'string' || typeof e.allowed_values !== 'string') continue;
    const p = parseKnobPattern(e.allowed_values);
    const option = e.option.startsWith('-') ? e.option : `-${e.option}`;
    knobs.push({
      option,
      pattern: e.allowed_values,
      values: p && p.option === option ? p.values : [],
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

/** The database as getAllBuildRoutes() writes it, optionally only one knob (leading dash optional). */
export function knobDatabaseJson(db: KnobDatabase, knob?: string): string {
  const strip = (s: string) => s.replace(/^-/, '');
  const knobs = knob === undefined ? db.knobs : db.knobs.filter((k) => strip(k.option) === strip(knob));
  return JSON.stringify(
    {
      ...(db.tunerVersion ? { tuner_version: db.tunerVersion } : {}),
      tuner_options: knobs.map((k) => ({
        option: k.option,
        allowed_values: k.pattern,
        ...(k.defaultValue !== undefined ? { default_value: k.defaultValue } : {}),
        ...(k.help !== undefined ? { help: k.help } : {}),
      })),
    },
    null,
    2,
  );
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
    }
  }
  return out;
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
