// `backends [--json]`: which build backends this machine has, with versions or the reason not.
import { parseArgs } from 'node:util';
import { createBuildService } from '../../service/build-service.js';
import type { BackendCapabilities, BackendInfo } from '../../shared/protocol.js';
import { trtVersionOf } from '../../shared/trt-capabilities.js';
import { UsageError } from '../../shared/usage-error.js';
import { endQuietlyWhenStdoutCloses } from '../closed-stdout.js';

export const BACKENDS_HELP = `Usage: trt-build-studio backends [--json]

Lists the build backends (TensorRT, simulated): available or not, version, and why not. For
TensorRT: the library found (path, version), the adapters this build can drive (one per major),
the adapter in use, the GPU, and build routes (11.1+). For each: what its TensorRT version
offers (precision flags, hardware compatibility, build routes ...), as the native layer reports it.
--json prints the backend objects as they are.

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
  // A worker answering the query notices the closed channel and exits by itself.
  endQuietlyWhenStdoutCloses();
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
    for (const b of list) process.stdout.write(describeBackend(b));
    return 0;
  } finally {
    await service.shutdown();
  }
}

/** What the backend's TensorRT release can do, as the native layer reports it, on one line. */
export function capabilitiesLine(c: BackendCapabilities): string {
  const yesNo = (b: boolean) => (b ? 'yes' : 'no');
  const deprecated = c.weakTypingDeprecated ? ' (all deprecated)' : c.deprecatedPrecisions.length ? ` (${c.deprecatedPrecisions.join(', ')} deprecated)` : '';
  const flags = c.stronglyTypedImplied ? 'none (networks are strongly typed)' : `${c.precisions.join(' ')}${deprecated}`;
  return (
    `TensorRT ${c.version} offers: precision flags ${flags}; hardware compatibility ${c.hardwareCompatibility.join(', ')}; ` +
    `build routes ${yesNo(c.buildRoutes)}; streamed engine ${yesNo(c.serializeToStream)}; timing-cache entry counts ${yesNo(c.timingCacheKeyCount)}`
  );
}

/** One backend as indented lines: state first, then what was found (or why not). */
export function describeBackend(b: BackendInfo): string {
  const pad = '           ';
  const state = b.available ? `available  ${b.version ?? ''}`.trimEnd() : `unavailable: ${b.reason ?? 'unknown reason'}`;
  const lines = [`${b.name.padEnd(10)} ${state}${b.name === 'simulated' && b.available ? '  (stand-in for tests and demos; writes no real engine)' : ''}`];
  if (b.name === 'simulated') lines.push(`${pad}imitates TensorRT ${trtVersionOf(b)} (its options and their checks)`);
  if (b.library) lines.push(`${pad}library: ${b.library.path} (TensorRT ${b.library.version})`);
  if (b.parser) lines.push(`${pad}ONNX parser: ${b.parser.path} (${b.parser.version})`);
  if (b.adapters) {
    const list = b.adapters.map((a) => `${a.major}.x (headers ${a.headerVersion})`).join(', ');
    lines.push(`${pad}adapters in this build: ${list || 'none (built without TensorRT headers)'}`);
  }
  if (b.adapter) lines.push(`${pad}adapter in use: ${b.adapter.major}.x (headers ${b.adapter.headerVersion}) ${b.adapter.path}`);
  else if (b.name === 'tensorrt' && b.library && !b.available) lines.push(`${pad}adapter in use: none`);
  for (const p of b.preloaded ?? []) lines.push(`${pad}preloaded: ${p.path}${p.version ? ` (${p.version})` : ''}`);
  if (b.gpu) lines.push(`${pad}GPU ${b.gpu.device}: ${b.gpu.name}, compute capability ${b.gpu.computeCapability}${b.gpu.uuid ? `, ${b.gpu.uuid}` : ''}`);
  if (b.cudaDriver) {
    lines.push(
      `${pad}CUDA driver: ${b.cudaDriver.path} (supports CUDA ${b.cudaDriver.version || 'unknown'}${b.cudaDriver.driverVersion ? `; NVIDIA driver ${b.cudaDriver.driverVersion}` : ''})`,
    );
    if (b.cudaDriver.problem) lines.push(`${pad}  ${b.cudaDriver.problem}`);
  }
  if (b.plugins) {
    const creators = b.plugins.creators !== undefined ? `, ${b.plugins.creators} plugin creators registered` : '';
    lines.push(`${pad}plugins: ${b.plugins.path ?? 'standard plugin library'}${b.plugins.version ? ` (${b.plugins.version})` : ''}${creators}`);
  }
  if (b.capabilities) lines.push(`${pad}${capabilitiesLine(b.capabilities)}`);
  if (b.buildRoutes) lines.push(`${pad}build route knobs: ${b.buildRoutes.join(' ') || '(none listed)'}  (a route picks one value each; trtexec --helpBuildRoute)`);
  // The knob database's JSON is for --json and --helpBuildRoute, not for a line of text.
  for (const [k, v] of Object.entries(b.detail ?? {})) if (k !== 'buildRoutesJson') lines.push(`${pad}${k}: ${v}`);
  return lines.join('\n') + '\n';
}
