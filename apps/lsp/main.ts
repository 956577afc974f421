// Direct entry: `node dist/apps/lsp/main.js [--stdio]` runs the language server without the CLI.
import { runLsp } from './command.js';
import { processSignals } from '../process/process-signals.js';
import { displayLines } from '../shared/display-text.js';

runLsp(process.argv.slice(2)).then(
  (code) => processSignals().exitWith(code),
  (e: unknown) => {
    process.stderr.write(`trt-build-studio lsp: ${displayLines((e as Error).stack ?? String(e))}\n`);
    process.exit(1);
  },
);
