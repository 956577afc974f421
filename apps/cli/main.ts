// `trt-build-studio`: build | inspect | backends | serve | mcp | watch …. Exit codes: 0 ok, 1 the build
// failed or crashed (or an internal error), 2 bad usage or bad input, 130 cancelled.
import { processSignals } from '../process/process-signals.js';
import { ServiceError } from '../service/api.js';
import type { ShapesError } from '../service/build-validation.js';
import { displayMessage } from '../shared/display-text.js';
import { UsageError } from '../shared/usage-error.js';
import { packageVersion } from '../service/package-info.js';

const HELP = `Usage: trt-build-studio <command> [options]

Observable, cancelable TensorRT engine builds.

Commands:
  build <model.onnx> -o <engine>   build an engine, showing the build's phases live
  inspect <model.onnx>             print the model's summary (inputs, shapes, operators, sizes)
  backends                         list build backends (TensorRT, simulated) and their state
  check <engine> [--model m.onnx]  does the engine still fit this machine, model and options?
  compare <a> <b>                  two builds side by side: inputs, phase times, layers
  layers <engine | layers.json>    what TensorRT built, layer by layer: precision, tactic, time
  serve                            HTTP + Server-Sent Events service with the web UI
  mcp                              MCP server (stdio) for agent runtimes
  lsp                              language server (LSP, stdio) for editors: VS Code, Neovim, ...
  trtexec --onnx=<m> --saveEngine=<e> ...   run the build a trtexec command line describes
  watch -- <program> [args...]     run your own program and show every TensorRT build inside it
  worker --queue redis://host:port build farm worker: runs queued builds on this machine's GPUs
  farm status --queue redis://...  the build farm: workers, queued builds and why they wait, endings

Run \`trt-build-studio <command> --help\` for a command's options.
  -h, --help       this help
  -v, --version    print the version
`;

type Command = (argv: string[]) => Promise<number>;

// Each command's module is loaded only when that command runs: `inspect` must not pay for the
// service, HTTP, MCP or zod code it never uses (the whole process is what a user waits for).
// A new command is one line here and one in HELP.
const COMMANDS: Record<string, () => Promise<Command>> = {
  build: async () => (await import('./commands/build.js')).runBuild,
  inspect: async () => (await import('./commands/inspect.js')).runInspect,
  backends: async () => (await import('./commands/backends.js')).runBackends,
  check: async () => (await import('./commands/check.js')).runCheck,
  compare: async () => (await import('./commands/compare.js')).runCompare,
  layers: async () => (await import('./commands/layers.js')).runLayers,
  serve: async () => (await import('./commands/serve.js')).runServe,
  mcp: async () => (await import('../mcp/server.js')).runMcp,
  trtexec: async () => (await import('./commands/trtexec.js')).runTrtexec,
  lsp: async () => (await import('../lsp/command.js')).runLsp,
  worker: async () => (await import('../farm/worker-command.js')).runWorker,
  farm: async () => (await import('../farm/farm-command.js')).runFarm,
  watch: async () => (await import('./commands/watch.js')).runWatch,
};

/**
 * Commands that stop their build workers on SIGINT/SIGTERM. Their signal handlers go in before the
 * command's modules load, stay to the end, and the process ends explicitly with the command's
 * code (see process/process-signals.ts): no moment where a signal kills the process by default.
 */
const OWN_SIGNALS = new Set(['build', 'trtexec', 'mcp', 'serve', 'lsp', 'worker', 'watch']);

function isUsageError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return e instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_'));
}

export async function main(argv: string[]): Promise<number> {
  // First thing (bin/trt-build-studio.js has usually installed them already, before this module
  // loaded): from here on no signal meets the default action.
  const signals = processSignals();
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    process.stdout.write(HELP);
    return cmd === undefined ? 2 : 0;
  }
  if (cmd === '-v' || cmd === '--version') {
    process.stdout.write(`trt-build-studio ${packageVersion()}\n`);
    return 0;
  }
  const load = COMMANDS[cmd];
  if (!load) {
    process.stderr.write(`trt-build-studio: unknown command "${displayMessage(cmd)}"\nRun \`trt-build-studio --help\` for the commands.\n`);
    return 2;
  }
  if (!OWN_SIGNALS.has(cmd)) {
    // A command without workers to stop ends at once, with the shell's code for the signal
    // (128 + its number), as the default action would, signals kept from before included.
    signals.listen((signal) => signals.hardExit(128 + (signal === 'SIGTERM' ? 15 : 2)));
    return runCommand(cmd, load, rest);
  }
  const code = await runCommand(cmd, load, rest);
  signals.exitWith(code);
  return code;
}

async function runCommand(cmd: string, load: () => Promise<Command>, rest: string[]): Promise<number> {
  let run: Command;
  try {
    run = await load();
  } catch (e) {
    process.stderr.write(`trt-build-studio: the "${cmd}" command is not available in this build (${(e as Error).message.split('\n')[0]})\n`);
    return 1;
  }
  try {
    return await run(rest);
  } catch (e) {
    if (isUsageError(e)) {
      // Node's parseArgs messages explain positionals at length; the flag is what matters.
      const msg = (e as Error).message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown option $1');
      process.stderr.write(`trt-build-studio ${cmd}: ${displayMessage(msg)}\nRun \`trt-build-studio ${cmd} --help\` for usage.\n`);
      return 2;
    }
    if (e instanceof ServiceError) {
      // Messages quote names from the model (tensors, locations): escape what a terminal would act
      // on, line by line (several problems come one per line). `build` restates a shapes
      // suggestion in its own flags (trtexec does so itself).
      const shapes = cmd === 'build' && typeof (e as Partial<ShapesError>).restate === 'function' ? (e as ShapesError) : undefined;
      const msg = shapes ? shapes.restate((require('./build-args.js') as typeof import('./build-args.js')).buildShapesSuggestion) : e.message;
      process.stderr.write(`trt-build-studio ${cmd}: ${msg.split('\n').map(displayMessage).join('\n')}\n`);
      return e.code === 'internal' ? 1 : 2;
    }
    process.stderr.write(
      `trt-build-studio ${cmd}: internal error: ${String((e as Error)?.stack ?? e)
        .split('\n')
        .map(displayMessage)
        .join('\n')}\n`,
    );
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Everything should be closed by now; do not let a stray handle keep a finished CLI alive.
      setTimeout(() => process.exit(code), 3000).unref();
    },
    (e) => {
      process.stderr.write(`trt-build-studio: ${(e as Error)?.stack ?? e}\n`);
      process.exit(1);
    },
  );
}
