// `backends [--json]`: which build backends this machine has, with versions or the reason not.
import { parseArgs } from 'node:util';
import { createBuildService } from '../../service/build-service.js';
import { UsageError } from '../usage-error.js';

export const BACKENDS_HELP = `Usage: trt-build-studio backends [--json]

Lists the build backends (TensorRT, simulated): available or not, version, and why not.

Options:
  --json      print the list as JSON
  -h, --help
`;

export async function runBackends(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(BACKENDS_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`backends takes no arguments, got: ${positionals.join(' ')}`);
  const service = createBuildService();
  try {
    const list = await service.listBackends();
    if (values.json) {
      process.stdout.write(JSON.stringify(list, null, 2) + '\n');
      return 0;
    }
    for (const b of list) {
      const state = b.available ? `available  ${b.version ?? ''}` : `unavailable: ${b.reason ?? 'unknown reason'}`;
      process.stdout.write(`${b.name.padEnd(10)} ${state}${b.name === 'simulated' && b.available ? '  (stand-in for tests and demos; writes no real engine)' : ''}\n`);
      for (const [k, v] of Object.entries(b.detail ?? {})) process.stdout.write(`           ${k}: ${v}\n`);
    }
    return 0;
  } finally {
    await service.shutdown();
  }
}
