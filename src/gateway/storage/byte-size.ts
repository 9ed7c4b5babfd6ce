// Sizes for people: binary units, as the plans are defined (100 MB = 100 × 1024 × 1024 bytes).
const UNITS = ["B", "KB", "MB", "GB", "TB"];

/** 0 -> "0 B", 1536 -> "1.5 KB", 104857600 -> "100 MB", 5368709120 -> "5 GB". */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = unit === 0 ? String(value) : String(Math.round(value * 100) / 100);
  return `${rounded} ${UNITS[unit]}`;
}
