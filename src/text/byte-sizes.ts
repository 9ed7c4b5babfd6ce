// Byte counts for people, in binary units (1 KB = 1024 bytes, as the plans and limits are set:
// 100 MB = 100 × 1024 × 1024 bytes). A leaf: it imports nothing from the project.

/** A limit as it was set, never rounded: 33554432 -> "32 MB", 1536 -> "1.5 KB", 1000 -> "1000 bytes". */
export function exactSize(bytes: number): string {
  for (const [unit, size] of EXACT_UNITS) {
    if (bytes >= size && (bytes * 10) % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

const EXACT_UNITS: ReadonlyArray<readonly [string, number]> = [
  ["GB", 1024 ** 3],
  ["MB", 1024 ** 2],
  ["KB", 1024],
];

const ROUNDED_UNITS = ["B", "KB", "MB", "GB", "TB"];

/**
 * A measured size, rounded: one decimal under 10 of its unit, none from 10 on. 0 -> "0 B",
 * 1536 -> "1.5 KB", 50000 -> "49 KB", 104857600 -> "100 MB" (a small size never reads "0 MB").
 */
export function roundedSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < ROUNDED_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded} ${ROUNDED_UNITS[unit]}`;
}
