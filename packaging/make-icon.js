#!/usr/bin/env node
// Draws packaging/icon.png (512×512 RGBA), the app icon electron-builder installs for the .desktop
// entry. No image tools needed: the shapes are computed per pixel (4×4 supersampling for smooth
// edges) and written as a PNG with zlib. Run `node packaging/make-icon.js` after changing it.
//
// The picture: a dark rounded tile with a build timeline — nested phase bars of decreasing length,
// like the app's phase tree — and a green progress bar along the bottom.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const SIZE = 512;
const SS = 4;

/** Signed distance-ish test for a rounded rectangle. */
function inRoundRect(x, y, r) {
  const { x0, y0, x1, y1, radius } = r;
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + radius), x1 - radius);
  const cy = Math.min(Math.max(y, y0 + radius), y1 - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

const rect = (x0, y0, w, h, radius, color) => ({ x0, y0, x1: x0 + w, y1: y0 + h, radius, color });
const TILE = rect(16, 16, 480, 480, 104, [0x1f, 0x26, 0x33]);
// Later shapes paint over earlier ones.
const SHAPES = [
  TILE,
  rect(88, 110, 336, 48, 24, [0x5b, 0x8d, 0xef]),
  rect(136, 182, 240, 48, 24, [0x4f, 0xb3, 0xbf]),
  rect(184, 254, 168, 48, 24, [0x4f, 0xb3, 0xbf]),
  rect(136, 326, 120, 48, 24, [0xe0, 0xa1, 0x3c]),
  rect(88, 404, 336, 24, 12, [0x3a, 0x44, 0x55]),
  rect(88, 404, 232, 24, 12, [0x76, 0xb9, 0x00]),
];

function pixel(px, py) {
  let r = 0, g = 0, b = 0, a = 0;
  for (let sy = 0; sy < SS; sy++) {
    for (let sx = 0; sx < SS; sx++) {
      const x = px + (sx + 0.5) / SS;
      const y = py + (sy + 0.5) / SS;
      let color = null;
      for (const s of SHAPES) if (inRoundRect(x, y, s)) color = s.color;
      if (color) {
        r += color[0];
        g += color[1];
        b += color[2];
        a += 255;
      }
    }
  }
  const n = SS * SS;
  // Colour averaged over covered samples only; coverage becomes alpha (no dark fringe).
  const covered = a / 255;
  return covered ? [Math.round(r / covered), Math.round(g / covered), Math.round(b / covered), Math.round(a / n)] : [0, 0, 0, 0];
}

function crc32(buf) {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

function png() {
  const raw = Buffer.alloc(SIZE * (1 + SIZE * 4));
  for (let y = 0; y < SIZE; y++) {
    const row = y * (1 + SIZE * 4);
    raw[row] = 0; // filter: none
    for (let x = 0; x < SIZE; x++) raw.set(pixel(x, y), row + 1 + x * 4);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(SIZE, 0);
  ihdr.writeUInt32BE(SIZE, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const out = process.argv[2] ?? path.join(__dirname, 'icon.png');
fs.writeFileSync(out, png());
console.log(`wrote ${out}`);
