// Clearing a flat background in raw RGBA pixels, in place. Not segmentation: it only knows colour
// distance and connectivity.
//  1. The background colour is the per-channel median of the outer ring; when most of the ring is
//     far from it, the background is not flat and the picture is refused rather than mangled.
//  2. The background is the region 4-connected to the picture's edge whose colour is within a
//     tolerance of that colour (set from the ring's own noise). Background-coloured areas the
//     subject encloses (a white shirt, the eye of a letter) are not connected, so they stay.
//  3. An edge band two pixels deep around that region gets soft alpha, estimated per pixel as the
//     share of its distance from the background in the distance of the most distinct pixel near
//     it (an anti-aliased edge pixel is a mix of the two), and its colour is un-mixed from the
//     background so no halo of the old colour remains.
// Typed arrays and one breadth-first pass; nothing per pixel is allocated.

export interface ClearedBackground {
  /** The background colour found, RGB. */
  colour: [number, number, number];
  /** Colour distance below which a connected pixel is background. */
  tolerance: number;
  /** Pixels made fully transparent. */
  cleared: number;
}

/** The border is not one colour: the picture has no flat background to clear. */
export class NotFlatBackgroundError extends Error {
  constructor(readonly matchingShare: number) {
    super(`only ${Math.round(matchingShare * 100)}% of the picture's border is one colour`);
    this.name = "NotFlatBackgroundError";
  }
}

/** Ring pixels further than this from the median are not background. */
const FLAT_DISTANCE = 40;
/** At least this share of the (opaque) ring must be background for the background to count as flat. */
const FLAT_SHARE = 0.5;
const EDGE_DEPTH = 2;
const EDGE_WINDOW = 2;

/**
 * Clears the background of `pixels` (RGBA, 8 bits, row-major) in place. Undefined when the
 * border is already mostly transparent (nothing to clear); throws NotFlatBackgroundError.
 */
export function clearFlatBackground(pixels: Uint8Array, width: number, height: number): ClearedBackground | undefined {
  const ring = opaqueRing(pixels, width, height);
  if (ring.opaque.length < ring.total / 2) return undefined;
  const colour = medianColour(pixels, ring.opaque);
  const [br, bg, bb] = colour;
  const distanceSquared = (offset: number): number => {
    const dr = pixels[offset]! - br;
    const dg = pixels[offset + 1]! - bg;
    const db = pixels[offset + 2]! - bb;
    return dr * dr + dg * dg + db * db;
  };

  const tolerance = ringTolerance(ring.opaque, distanceSquared);
  const toleranceSquared = tolerance * tolerance;
  // Clearly the subject, for the edge ratio, when nothing nearby is more distinct.
  const foregroundFloor = 2 * tolerance + 16;

  const count = width * height;
  // 0 subject, 1 background, 2 edge band, 3 background-coloured but not (yet) reached.
  const state = new Uint8Array(count);
  for (let p = 0; p < count; p++) if (pixels[p * 4 + 3] === 0 || distanceSquared(p * 4) < toleranceSquared) state[p] = 3;
  // Breadth-first from the picture's edge through background-coloured pixels (4-connected); the
  // subject pixels it touches are the first layer of the edge band.
  const queue = new Int32Array(count);
  const edge: number[] = [];
  /** Takes in pixel q; returns the queue's new length. */
  const reach = (q: number, tail: number): number => {
    const current = state[q];
    if (current === 3) {
      state[q] = 1;
      queue[tail] = q;
      return tail + 1;
    }
    if (current === 0) {
      state[q] = 2;
      edge.push(q);
    }
    return tail;
  };
  // Only background-coloured pixels of the picture's edge start the search.
  const seed = (q: number, tail: number): number => (state[q] === 3 ? reach(q, tail) : tail);
  let tail = 0;
  for (let x = 0; x < width; x++) tail = seed((height - 1) * width + x, seed(x, tail));
  for (let y = 1; y < height - 1; y++) tail = seed(y * width + width - 1, seed(y * width, tail));
  for (let head = 0; head < tail; head++) {
    const p = queue[head]!;
    const x = p % width;
    if (x > 0) tail = reach(p - 1, tail);
    if (x < width - 1) tail = reach(p + 1, tail);
    if (p >= width) tail = reach(p - width, tail);
    if (p < count - width) tail = reach(p + width, tail);
  }
  const cleared = tail;
  // A second layer (8-connected) for two-pixel anti-aliasing. Unreached background-coloured
  // pixels are enclosed by the subject and stay as they are.
  let layerStart = 0;
  for (let depth = 1; depth < EDGE_DEPTH; depth++) {
    const layerEnd = edge.length;
    for (let index = layerStart; index < layerEnd; index++) {
      const p = edge[index]!;
      const x = p % width;
      const y = (p - x) / width;
      for (let ny = Math.max(0, y - 1); ny <= Math.min(height - 1, y + 1); ny++) {
        for (let nx = Math.max(0, x - 1); nx <= Math.min(width - 1, x + 1); nx++) {
          const q = ny * width + nx;
          if (state[q] !== 0) continue;
          state[q] = 2;
          edge.push(q);
        }
      }
    }
    layerStart = layerEnd;
  }

  for (const p of edge) {
    const x = p % width;
    const y = (p - x) / width;
    let strongest = foregroundFloor;
    for (let ny = Math.max(0, y - EDGE_WINDOW); ny <= Math.min(height - 1, y + EDGE_WINDOW); ny++) {
      for (let nx = Math.max(0, x - EDGE_WINDOW); nx <= Math.min(width - 1, x + EDGE_WINDOW); nx++) {
        const q = ny * width + nx;
        if (state[q] !== 1) strongest = Math.max(strongest, Math.sqrt(distanceSquared(q * 4)));
      }
    }
    const offset = p * 4;
    const distance = Math.sqrt(distanceSquared(offset));
    // Observed = mix * subject + (1 - mix) * background: solve for the subject's colour. The
    // alpha ramps from the tolerance, so background noise next to the subject stays clear.
    const mix = Math.min(1, distance / strongest);
    const alpha = Math.min(1, Math.max(0, (distance - tolerance) / (strongest - tolerance)));
    if (alpha > 0 && mix < 1) {
      for (let channel = 0; channel < 3; channel++) {
        const value = colour[channel]! + (pixels[offset + channel]! - colour[channel]!) / mix;
        pixels[offset + channel] = Math.min(255, Math.max(0, Math.round(value)));
      }
    }
    pixels[offset + 3] = Math.round(pixels[offset + 3]! * alpha);
  }
  for (let p = 0; p < count; p++) if (state[p] === 1) pixels[p * 4 + 3] = 0;
  return { colour, tolerance, cleared };
}

/** Offsets of the ring's opaque pixels (the ring is 1% of the short side deep, 1 to 8 pixels), and the ring's size. */
function opaqueRing(pixels: Uint8Array, width: number, height: number): { opaque: Int32Array; total: number } {
  const depth = Math.max(1, Math.min(8, Math.round(Math.min(width, height) / 100)));
  const offsets: number[] = [];
  let total = 0;
  for (let y = 0; y < height; y++) {
    const fullRow = y < depth || y >= height - depth;
    for (let x = 0; x < width; x++) {
      if (!fullRow && x === depth && width - depth > depth) x = width - depth;
      total += 1;
      const offset = (y * width + x) * 4;
      if (pixels[offset + 3]! >= 128) offsets.push(offset);
    }
  }
  return { opaque: Int32Array.from(offsets), total };
}

function medianColour(pixels: Uint8Array, offsets: Int32Array): [number, number, number] {
  const histograms = [new Uint32Array(256), new Uint32Array(256), new Uint32Array(256)];
  for (const offset of offsets) for (const [channel, histogram] of histograms.entries()) histogram[pixels[offset + channel]!]! += 1;
  const middle = offsets.length / 2;
  const median = (histogram: Uint32Array): number => {
    let seen = 0;
    for (let value = 0; value < 256; value++) {
      seen += histogram[value]!;
      if (seen >= middle) return value;
    }
    return 255;
  };
  return [median(histograms[0]!), median(histograms[1]!), median(histograms[2]!)];
}

/** The background tolerance: above the ring's own noise (90th percentile of its near pixels), 10 to 48. */
function ringTolerance(offsets: Int32Array, distanceSquared: (offset: number) => number): number {
  const histogram = new Uint32Array(FLAT_DISTANCE + 1);
  let near = 0;
  for (const offset of offsets) {
    const distance = Math.round(Math.sqrt(distanceSquared(offset)));
    if (distance > FLAT_DISTANCE) continue;
    histogram[distance]! += 1;
    near += 1;
  }
  if (near < offsets.length * FLAT_SHARE) throw new NotFlatBackgroundError(near / offsets.length);
  let seen = 0;
  let noise = FLAT_DISTANCE;
  for (let distance = 0; distance <= FLAT_DISTANCE; distance++) {
    seen += histogram[distance]!;
    if (seen >= near * 0.9) {
      noise = distance;
      break;
    }
  }
  return Math.min(48, Math.max(10, Math.round(noise * 1.5) + 6));
}
