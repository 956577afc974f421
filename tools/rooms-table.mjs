#!/usr/bin/env node
// The rooms table of docs/architecture.md, rendered from tools/rooms.json (the one place the rooms
// and their imports are written). test/layering.test.ts fails when the doc's table differs;
// `node tools/rooms-table.mjs --write` rewrites it between the markers, `--check` only compares.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOMS_FILE = path.join(ROOT, 'tools/rooms.json');
export const DOC_FILE = path.join(ROOT, 'docs/architecture.md');
export const BEGIN = '<!-- rooms table: generated from tools/rooms.json by `node tools/rooms-table.mjs --write`; do not edit by hand -->';
export const END = '<!-- end of rooms table -->';

/** tools/rooms.json, parsed. */
export function readRooms() {
  return JSON.parse(readFileSync(ROOMS_FILE, 'utf8'));
}

const code = (s) => `\`${s}\``;
const cell = (s) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** What a room may import, in words: rooms (with the files a contract allows), packages, Node. */
function mayImportText(spec, room) {
  const rooms = spec.rooms[room].mayImport.map((r) => {
    const contract = spec.contracts[r];
    return contract ? `${r} (only ${contract.files.map((f) => code(`apps/${r}/${f}`)).join(', ')})` : r;
  });
  const parts = [rooms.length ? rooms.join(', ') : 'nothing of the app'];
  const s = spec.rooms[room];
  if (s.packagesOnly) parts.push(`packages: ${s.packagesOnly.names.join(', ')} only`);
  if (s.noNode) parts.push('no Node modules');
  if (spec.electron.room === room) parts.push(`${code('electron')} (the only room)`);
  if (spec.addon.room === room) parts.push('loads the native addon (the only room)');
  return parts.join('; ');
}

function importedByText(spec, room) {
  const by = Object.keys(spec.rooms).filter((r) => r !== room && spec.rooms[r].mayImport.includes(room));
  return by.length ? by.join(', ') : 'nothing';
}

/** The markdown table, markers included. */
export function renderRoomsTable(spec = readRooms()) {
  const rows = [
    '| Room | Owns | May import | Imported by | Why |',
    '| --- | --- | --- | --- | --- |',
    ...spec.elsewhere.map((e) => `| ${code(e.folder)} | ${cell(e.owns)} | ${cell(e.mayImport)} | — | — |`),
    ...Object.entries(spec.rooms).map(
      ([room, s]) => `| ${code(`apps/${room}/`)} | ${cell(s.owns)} | ${cell(mayImportText(spec, room))} | ${importedByText(spec, room)} | ${cell(s.why)} |`,
    ),
  ];
  return [BEGIN, ...rows, END].join('\n');
}

/** The table as docs/architecture.md has it now (markers included), or null without markers. */
export function docRoomsTable(doc = readFileSync(DOC_FILE, 'utf8')) {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) return null;
  return doc.slice(a, b + END.length);
}

function main(argv) {
  const doc = readFileSync(DOC_FILE, 'utf8');
  const now = docRoomsTable(doc);
  if (now === null) {
    console.error(`${path.relative(ROOT, DOC_FILE)} has no rooms table markers (${BEGIN} … ${END})`);
    return 1;
  }
  const want = renderRoomsTable();
  if (argv[0] === '--write') {
    if (now !== want) {
      const tmp = `${DOC_FILE}.${process.pid}.tmp`;
      writeFileSync(
        tmp,
        doc.replace(now, () => want),
      );
      renameSync(tmp, DOC_FILE);
    }
    return 0;
  }
  if (argv[0] === '--check' || argv.length === 0) {
    if (now === want) return 0;
    console.error(`${path.relative(ROOT, DOC_FILE)}'s rooms table differs from tools/rooms.json: run \`node tools/rooms-table.mjs --write\``);
    return 1;
  }
  console.error(`unknown argument "${argv[0]}": use --check (the default) or --write`);
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
