// API keys: `gw_` + 32 random bytes in base62, shown once. Only a SHA-256 hash and a short
// visible prefix are stored.
import { hash, randomBytes, timingSafeEqual } from "node:crypto";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const KEY_PATTERN = /^gw_[0-9A-Za-z]{43,}$/;
const VISIBLE_CHARACTERS = 8;

export function generateApiKey(): string {
  return `gw_${randomBase62()}`;
}

/** 32 random bytes as 43 base62 digits: the secret part of an API key or an admin token. */
export function randomBase62(): string {
  let value = BigInt(`0x${randomBytes(32).toString("hex")}`);
  let encoded = "";
  while (value > 0n) {
    encoded = alphabet[Number(value % 62n)] + encoded;
    value /= 62n;
  }
  // 32 bytes need up to 43 base62 digits; pad so every one has the same length.
  return encoded.padStart(43, "0");
}

/** One-shot `crypto.hash` (Node >= 20.12): a third of createHash's cost, paid on every request. */
export function hashApiKey(key: string): string {
  return hash("sha256", key, "hex");
}

export function visiblePrefix(key: string): string {
  return key.slice(0, 3 + VISIBLE_CHARACTERS);
}

export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}
