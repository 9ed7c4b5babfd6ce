// Embedding vectors in OpenAI's two encodings: JSON floats, and base64 of the float32 values'
// little-endian bytes (what `encoding_format: "base64"` answers, and what the official SDKs
// decode with a Float32Array). Checks that an upstream's vector is one of the two, and converts
// between them.
import { UpstreamNetworkError } from "./provider-errors.js";

const FLOAT32_BYTES = 4;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Floats as base64 float32 little-endian bytes (each value rounded to float32). */
export function floatsToBase64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * FLOAT32_BYTES);
  for (let index = 0; index < values.length; index += 1) bytes.writeFloatLE(values[index]!, index * FLOAT32_BYTES);
  return bytes.toString("base64");
}

/** The floats of base64 float32 little-endian bytes. */
export function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const values = new Array<number>(bytes.length / FLOAT32_BYTES);
  for (let index = 0; index < values.length; index += 1) values[index] = bytes.readFloatLE(index * FLOAT32_BYTES);
  return values;
}

/**
 * The vector of an upstream's answer, checked: floats (see requireFloats), or base64 of a whole
 * number of float32 values. Anything else is the upstream's fault (`invalid_response`).
 */
export function requireVector(provider: string, value: unknown, where: string): number[] | string {
  if (typeof value !== "string") return requireFloats(provider, value, where);
  if (value.length > 0 && value.length % 4 === 0 && BASE64.test(value) && Buffer.byteLength(value, "base64") % FLOAT32_BYTES === 0) return value;
  throw notAVector(provider, where);
}

/** A vector as a non-empty list of finite numbers, or the upstream's fault (`invalid_response`). */
export function requireFloats(provider: string, value: unknown, where: string): number[] {
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "number" && Number.isFinite(item))) return value as number[];
  throw notAVector(provider, where);
}

function notAVector(provider: string, where: string): UpstreamNetworkError {
  return new UpstreamNetworkError(provider, "invalid_response", `${where} is not an embedding vector`);
}
