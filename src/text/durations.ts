// Lifetimes as people write them: 90s, 15m, 12h, 30d, 4w, or bare seconds (300). One parser for
// every place gw reads one (a key's cache lifetime, the x-gw-cache request header).

const LIFETIME = /^(\d{1,9})(s|m|h|d|w)?$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 } as const;

/** Seconds, from "90s", "15m", "12h", "30d", "4w" or "300"; undefined when the text is none of these or is 0. */
export function parseLifetimeSeconds(text: string): number | undefined {
  const match = LIFETIME.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * UNIT_SECONDS[(match[2] ?? "s") as keyof typeof UNIT_SECONDS];
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined;
}

/** The shortest way to write a number of seconds as a lifetime: 3600 -> "1h", 90 -> "90s". */
export function formatLifetime(seconds: number): string {
  for (const [unit, size] of [
    ["w", 604_800],
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}
