/**
 * The vectors the fake upstreams answer: deterministic per text (or token list) and length, every
 * value a float32 (so base64 of its little-endian bytes decodes to exactly the same numbers), and
 * a shorter vector the start of the longer one, as `dimensions` cuts real ones.
 */
export function fakeEmbedding(seed: string, dimensions: number): number[] {
  // FNV-1a of the seed's bytes, then a linear congruential sequence.
  let state = 2166136261;
  for (const byte of Buffer.from(seed)) state = Math.imul(state ^ byte, 16777619) >>> 0;
  const values: number[] = [];
  for (let index = 0; index < dimensions; index += 1) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values.push(Math.fround((state / 2 ** 32) * 2 - 1));
  }
  return values;
}

/** The seed of one input: the text itself, or its token ids as JSON. */
export function seedOf(input: string | number[]): string {
  return typeof input === "string" ? input : JSON.stringify(input);
}
