// The command line of the stdio servers (`mcp`, `lsp`): the same flags in the same words, parsed
// once. `--key value` and `--key=value` both work; a bad line is a UsageError (exit 2).
import * as path from 'node:path';
import { UsageError, usageWords } from '../shared/usage-error.js';
import { parsePluginDirs, type PluginPolicy } from '../service/plugin-libraries.js';

export interface StdioServerOptions {
  outputDir?: string;
  heartbeatMs?: number;
  /** Build farm (mcp, lsp): the Redis URL builds are queued in. */
  queue?: string;
  /** Largest message accepted (lsp only: --max-message-mib), bytes. */
  maxMessageBytes?: number;
  /** --plugin-dir, repeatable: the only folders a client's plugin libraries may come from (as given, absolute). */
  pluginDirs?: string[];
  /**
   * Which plugin libraries builds may name: the --plugin-dir folders, checked and resolved by
   * readStdioServerArgs (none: every plugin library is refused). Set only there.
   */
  pluginPolicy?: PluginPolicy;
}

export interface StdioServerFlags {
  /** The command's name, for "see trt-build-studio <command> --help". */
  command: string;
  /** Lowest accepted --heartbeat, seconds. */
  minHeartbeatS: number;
  /** Accepts --queue (the MCP and language servers can hand builds to a farm). */
  queue?: boolean;
  /** Accepts --stdio and ignores it (LSP clients pass it; stdio is the only transport). */
  stdioFlag?: boolean;
  /** Accepts --max-message-mib (the language server's message size limit). */
  maxMessage?: boolean;
}

export function parseStdioServerArgs(argv: readonly string[], flags: StdioServerFlags): StdioServerOptions | 'help' {
  const opts: StdioServerOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(usageWords.needsValue(flag));
      return v;
    };
    if (flag === '--help' || flag === '-h') return 'help';
    if (flag === '--stdio' && flags.stdioFlag) continue;
    if (flag === '--output-dir') {
      opts.outputDir = path.resolve(value());
    } else if (flag === '--plugin-dir') {
      (opts.pluginDirs ??= []).push(path.resolve(value()));
    } else if (flag === '--queue' && flags.queue) {
      opts.queue = value();
    } else if (flag === '--max-message-mib' && flags.maxMessage) {
      const v = value();
      const mib = Number(v);
      if (!Number.isFinite(mib) || mib < 1 || mib > 1024) throw new UsageError(usageWords.between('--max-message-mib', 1, 1024, 'MiB', v));
      opts.maxMessageBytes = Math.round(mib * 1024 * 1024);
    } else if (flag === '--heartbeat') {
      const v = value();
      const s = Number(v);
      if (!Number.isFinite(s) || s < flags.minHeartbeatS || s > 60) throw new UsageError(usageWords.between('--heartbeat', flags.minHeartbeatS, 60, 'seconds', v));
      opts.heartbeatMs = Math.round(s * 1000);
    } else {
      throw new UsageError(usageWords.unknownArgument(arg, flags.command));
    }
  }
  if (opts.queue && opts.pluginDirs) {
    // On a farm the workers load the libraries, each from its own `worker --plugin-dir` folders.
    throw new UsageError('--plugin-dir does not apply with --queue: each farm worker loads plugin libraries only from its own folders (trt-build-studio worker --plugin-dir)');
  }
  return opts;
}

/**
 * The command line as a stdio server's run function needs it: the options, or the exit code when
 * the line asked for help (0, usage printed to stdout) or was wrong (2, the reason on stderr).
 */
export function readStdioServerArgs(argv: readonly string[], flags: StdioServerFlags, usage: string): StdioServerOptions | number {
  try {
    const parsed = parseStdioServerArgs(argv, flags);
    // The folders are checked once, at start: a typo is a refusal to start, not a build refused later.
    if (parsed !== 'help') return { ...parsed, pluginPolicy: parsePluginDirs(parsed.pluginDirs ?? []) };
    // No protocol session has started, so stdout is still the terminal's.
    process.stdout.write(`${usage}\n`);
    return 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`trt-build-studio ${flags.command}: ${e.message}\n`);
    return 2;
  }
}
