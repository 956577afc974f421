#!/usr/bin/env node
// node scripts/gen-trt-facts.js [--check] — writes native/src/core/trt_facts.h from
// native/trt-facts.json, the one list of TensorRT facts (supported majors, the first release of
// each gated option). The header is checked in so that every native build (cmake-js, the
// sanitizer build, an adapter's try_compile) has it without a generation step; --check exits 1
// when it differs from what the JSON gives (test/trt-facts.test.ts runs it).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const JSON_PATH = path.join(ROOT, 'native/trt-facts.json');
const HEADER_PATH = path.join(ROOT, 'native/src/core/trt_facts.h');

/** "10.12" → "{10, 12}"; absent → "{0, 0}" (always / never). Anything else is refused. */
function version(v, where) {
  if (v === undefined) return '{0, 0}';
  const m = /^(\d+)\.(\d+)$/.exec(String(v));
  if (!m) throw new Error(`${where}: "${v}" is not a major.minor version`);
  return `{${Number(m[1])}, ${Number(m[2])}}`;
}

function simulatedDefault(v) {
  if (!/^\d+\.\d+\.\d+$/.test(String(v))) throw new Error(`simulatedDefault: "${v}" is not a major.minor.patch version`);
  return v;
}

const pascal = (s) => s.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase());

function render(facts) {
  const majors = facts.supportedMajors;
  if (!Array.isArray(majors) || !majors.length || !majors.every(Number.isInteger)) throw new Error('supportedMajors: a list of integers');
  const lines = [
    '// Generated from native/trt-facts.json by scripts/gen-trt-facts.js: edit the JSON and rerun it',
    '// (test/trt-facts.test.ts fails while the two differ). The TensorRT facts every native part reads:',
    '// the loader (supported majors), the adapters and the simulator (option gates), and the addon,',
    "// which reports each backend's capabilities from them (trt/trt_capabilities.h).",
    '#pragma once',
    '',
    '#include <cstdint>',
    '',
    'namespace tbs::facts {',
    '',
    '// clang-format off: one fact a line, as the JSON lists them',
    '// A library release, major.minor; {0, 0} means "every supported release" for a since and "never"',
    '// for a deprecation.',
    'struct Version {',
    '  int32_t major, minor;',
    '};',
    '',
    `inline constexpr int32_t kSupportedMajors[] = {${majors.join(', ')}};`,
    '// The newest release this code was checked against (a later minor of the same major is tried).',
    `inline constexpr Version kLastChecked${version(facts.lastChecked, 'lastChecked')};`,
    '// The release the simulated backend imitates unless TBS_SIM_TRT_VERSION names another.',
    `inline constexpr char const* kSimulatedDefault = "${simulatedDefault(facts.simulatedDefault)}";`,
    '',
    'struct PrecisionFlag {',
    '  char const* name;',
    '  Version since;',
    '  Version deprecated;',
    '};',
    '// The weakly typed precision flags, in the order they are listed everywhere; all end at',
    '// kWeakTypingRemoved.',
    'inline constexpr PrecisionFlag kPrecisionFlags[] = {',
    ...Object.entries(facts.precisionFlags).map(
      ([n, f]) => `    {"${n}", ${version(f.since, `precisionFlags.${n}.since`)}, ${version(f.deprecated, `precisionFlags.${n}.deprecated`)}},`,
    ),
    '};',
    '',
    'struct Level {',
    '  char const* name;',
    '  Version since;',
    '};',
    '// HardwareCompatibilityLevel values, as the options name them.',
    'inline constexpr Level kHardwareCompatibility[] = {',
    ...Object.entries(facts.hardwareCompatibility).map(([n, f]) => `    {"${n}", ${version(f.since, `hardwareCompatibility.${n}.since`)}},`),
    '};',
    '',
    '// The first release of each gated feature.',
    ...Object.entries(facts.features).flatMap(([n, f]) => [`// ${f.api}`, `inline constexpr Version k${pascal(n)}${version(f.since, `features.${n}.since`)};`]),
    '// clang-format on',
    '',
    '}  // namespace tbs::facts',
    '',
  ];
  return lines.join('\n');
}

function main() {
  const want = render(JSON.parse(fs.readFileSync(JSON_PATH, 'utf8')));
  const have = fs.existsSync(HEADER_PATH) ? fs.readFileSync(HEADER_PATH, 'utf8') : '';
  if (process.argv.includes('--check')) {
    if (have !== want) {
      console.error('native/src/core/trt_facts.h is not what native/trt-facts.json gives: run node scripts/gen-trt-facts.js');
      process.exit(1);
    }
    return;
  }
  if (have === want) return;
  const tmp = `${HEADER_PATH}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, want);
  fs.renameSync(tmp, HEADER_PATH);
  console.log('wrote native/src/core/trt_facts.h');
}

module.exports = { render, JSON_PATH, HEADER_PATH };
if (require.main === module) main();
