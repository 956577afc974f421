#!/usr/bin/env node
// Compares an Electron binary's NEEDED libraries (readelf -d) with
// packaging/electron-linked-libraries.txt, the list the deb's depends are checked against.
// Usage: node scripts/electron-needed.js path/to/electron   (exit 1 when a library is missing)
// Needs readelf (binutils). Run it where an Electron binary exists; none can be had where this
// project is developed, which is why the list is checked in.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const binary = process.argv[2];
if (!binary) {
  console.error('usage: node scripts/electron-needed.js path/to/electron');
  process.exit(2);
}
const listFile = path.join(__dirname, '..', 'packaging', 'electron-linked-libraries.txt');
const listed = new Set(
  fs
    .readFileSync(listFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.split(/\s+/)[0]),
);
const dynamic = execFileSync('readelf', ['-d', binary], { encoding: 'utf8' });
const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
const bundled = new Set(fs.readdirSync(path.dirname(path.resolve(binary))).filter((f) => f.includes('.so')));
const missing = needed.filter((lib) => !listed.has(lib) && !bundled.has(lib));
console.log(JSON.stringify({ binary, needed, bundled: needed.filter((l) => bundled.has(l)), missing }, null, 2));
if (missing.length) {
  console.error(`not in ${path.relative(process.cwd(), listFile)}: ${missing.join(', ')} (add each with its Debian package)`);
  process.exit(1);
}
