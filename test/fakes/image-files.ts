/**
 * Real, decodable picture files of any size for the fake image vendors, written without sharp:
 *  - PNG: RGB or RGBA, 8 bits, rows deflated with node:zlib (a solid colour compresses to almost nothing).
 *  - JPEG: baseline, YCbCr without subsampling, quantisation all ones. A solid colour is one DC
 *    value per component and an end-of-block per 8x8 block, so the entropy data is tiny.
 *  - WebP: lossless (VP8L) with five one-symbol prefix codes: every pixel costs zero bits.
 * Plus `imageSize()` reading width / height back from any of the three headers.
 */
import { deflateSync } from "node:zlib";

export type Rgba = [number, number, number, number];
export type FakeImageFormat = "png" | "jpeg" | "webp";

export const MEDIA_TYPES: Record<FakeImageFormat, string> = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" };

export interface ImageFileOptions {
  /** A cut-out subject: the centre (half of each side) opaque, the border fully transparent (PNG and WebP). */
  cutout?: boolean;
}

export function imageFile(format: FakeImageFormat, width: number, height: number, colour: Rgba = [200, 80, 40, 255], options: ImageFileOptions = {}): Buffer {
  if (format === "png") return pngFile(width, height, colour, options);
  if (format === "jpeg") return jpegFile(width, height, colour);
  return webpFile(width, height, colour, options);
}

function insideCutout(x: number, y: number, width: number, height: number): boolean {
  return x >= Math.floor(width / 4) && x < Math.ceil((3 * width) / 4) && y >= Math.floor(height / 4) && y < Math.ceil((3 * height) / 4);
}

// ---- PNG ----

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** RGBA when the colour is not fully opaque, else RGB. */
export function pngFile(width: number, height: number, colour: Rgba = [200, 80, 40, 255], options: ImageFileOptions = {}): Buffer {
  const alpha = colour[3] < 255 || options.cutout === true;
  const channels = alpha ? 4 : 3;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = alpha ? 6 : 2;
  const row = Buffer.alloc(1 + width * channels);
  for (let x = 0; x < width; x++) for (let c = 0; c < channels; c++) row[1 + x * channels + c] = colour[c]!;
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) {
    row.copy(raw, y * row.length);
    if (!options.cutout) continue;
    for (let x = 0; x < width; x++) raw[y * row.length + 1 + x * 4 + 3] = insideCutout(x, y, width, height) ? colour[3] : 0;
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

// ---- bit writers ----

class MsbBitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private count = 0;
  write(value: number, bits: number): void {
    for (let i = bits - 1; i >= 0; i--) {
      this.current = (this.current << 1) | ((value >> i) & 1);
      if (++this.count === 8) this.flushByte();
    }
  }
  /** Pads with one bits, as JPEG wants. */
  finish(): Buffer {
    while (this.count !== 0) this.write(1, 1);
    return Buffer.from(this.bytes);
  }
  private flushByte(): void {
    this.bytes.push(this.current);
    if (this.current === 0xff) this.bytes.push(0x00); // byte stuffing
    this.current = 0;
    this.count = 0;
  }
}

class LsbBitWriter {
  private readonly bytes: number[] = [];
  private current = 0;
  private count = 0;
  write(value: number, bits: number): void {
    for (let i = 0; i < bits; i++) {
      this.current |= ((value >> i) & 1) << this.count;
      if (++this.count === 8) {
        this.bytes.push(this.current);
        this.current = 0;
        this.count = 0;
      }
    }
  }
  finish(): Buffer {
    if (this.count > 0) this.bytes.push(this.current);
    return Buffer.from(this.bytes);
  }
}

// ---- JPEG ----

function segment(marker: number, data: number[]): Buffer {
  return Buffer.from([0xff, marker, ((data.length + 2) >> 8) & 0xff, (data.length + 2) & 0xff, ...data]);
}

function category(value: number): number {
  let magnitude = Math.abs(value);
  let bits = 0;
  while (magnitude > 0) {
    bits++;
    magnitude >>= 1;
  }
  return bits;
}

/** Baseline JPEG of one colour (alpha is dropped: JPEG has none). */
export function jpegFile(width: number, height: number, colour: Rgba = [200, 80, 40, 255]): Buffer {
  const [r, g, b] = colour;
  const ycc = [0.299 * r + 0.587 * g + 0.114 * b, 128 - 0.168736 * r - 0.331264 * g + 0.5 * b, 128 + 0.5 * r - 0.418688 * g - 0.081312 * b];
  // With a quantiser of 1, an 8x8 block of level p has DC coefficient 8 * (p - 128).
  const dcs = ycc.map((level) => Math.round(8 * (Math.min(255, Math.max(0, level)) - 128)));
  const categories = [...new Set([0, ...dcs.map(category)])].sort((x, y) => x - y);
  // Every DC symbol gets a 3-bit code (000, 001 ...): canonical, never all ones.
  const dcCode = new Map(categories.map((symbol, index) => [symbol, index]));
  const bits = new MsbBitWriter();
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const previous = [0, 0, 0];
  for (let block = 0; block < blocks; block++) {
    for (let component = 0; component < 3; component++) {
      const diff = dcs[component]! - previous[component]!;
      previous[component] = dcs[component]!;
      const size = category(diff);
      bits.write(dcCode.get(size)!, 3);
      if (size > 0) bits.write(diff > 0 ? diff : diff + (1 << size) - 1, size);
      bits.write(0, 1); // AC: end of block, code "0"
    }
  }
  const dcCounts = Array.from({ length: 16 }, (_, index) => (index === 2 ? categories.length : 0));
  const acCounts = Array.from({ length: 16 }, (_, index) => (index === 0 ? 1 : 0));
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]),
    segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]),
    segment(0xc4, [0x00, ...dcCounts, ...categories]),
    segment(0xc4, [0x10, ...acCounts, 0x00]),
    segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]),
    bits.finish(),
    Buffer.from([0xff, 0xd9]),
  ]);
}

// ---- WebP (lossless) ----

export function webpFile(width: number, height: number, colour: Rgba = [200, 80, 40, 255], options: ImageFileOptions = {}): Buffer {
  const bits = new LsbBitWriter();
  bits.write(0x2f, 8);
  bits.write(width - 1, 14);
  bits.write(height - 1, 14);
  bits.write(colour[3] < 255 || options.cutout ? 1 : 0, 1);
  bits.write(0, 3); // version
  bits.write(0, 1); // no transform
  bits.write(0, 1); // no colour cache
  bits.write(0, 1); // no meta prefix codes
  // Green, red, blue, alpha, distance: each a simple prefix code with one symbol (zero bits per
  // use); a cut-out's alpha has two symbols, 0 (code 0) and the colour's alpha (code 1).
  const alphas = options.cutout && colour[3] > 0 ? [0, colour[3]] : [colour[3]];
  for (const symbols of [[colour[1]], [colour[0]], [colour[2]], alphas, [0]]) {
    bits.write(1, 1); // simple code
    bits.write(symbols.length - 1, 1);
    const first = symbols[0]!;
    if (first <= 1) {
      bits.write(0, 1);
      bits.write(first, 1);
    } else {
      bits.write(1, 1);
      bits.write(first, 8);
    }
    if (symbols.length === 2) bits.write(symbols[1]!, 8);
  }
  if (alphas.length === 2) {
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) bits.write(insideCutout(x, y, width, height) ? 1 : 0, 1);
  }
  const data = bits.finish();
  const padded = data.length % 2 === 1 ? Buffer.concat([data, Buffer.alloc(1)]) : data;
  const chunkHeader = Buffer.alloc(8);
  chunkHeader.write("VP8L", 0, "ascii");
  chunkHeader.writeUInt32LE(data.length, 4);
  const riff = Buffer.alloc(12);
  riff.write("RIFF", 0, "ascii");
  riff.writeUInt32LE(4 + chunkHeader.length + padded.length, 4);
  riff.write("WEBP", 8, "ascii");
  return Buffer.concat([riff, chunkHeader, padded]);
}

// ---- reading sizes back ----

/** Width and height from a PNG, JPEG or WebP (VP8L / VP8 / VP8X) header; undefined for anything else. */
export function imageSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 25 && bytes.toString("ascii", 0, 4) === "RIFF" && bytes.toString("ascii", 8, 12) === "WEBP") {
    const chunk = bytes.toString("ascii", 12, 16);
    if (bytes.length < 30 && chunk !== "VP8L") return undefined;
    if (chunk === "VP8L") {
      const bits = bytes.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (chunk === "VP8X") return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
    if (chunk === "VP8 ") return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
    return undefined;
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    let offset = 2;
    while (offset + 9 < bytes.length) {
      if (bytes[offset] !== 0xff) return undefined;
      const marker = bytes[offset + 1]!;
      const length = bytes.readUInt16BE(offset + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
      }
      offset += 2 + length;
    }
  }
  return undefined;
}
