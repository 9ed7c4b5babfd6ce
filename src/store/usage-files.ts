// Where the usage log and its high-water mark live: data/usage/YYYY-MM.jsonl, and
// data/usage-watermark.json beside the folder, so deleting the folder leaves the mark behind.
import path from "node:path";

export function usageLogFile(usageDirectory: string, period: string): string {
  return path.join(usageDirectory, `${period}.jsonl`);
}

/** data/usage -> data/usage-watermark.json. */
export function usageWatermarkFile(usageDirectory: string): string {
  const resolved = path.resolve(usageDirectory);
  return path.join(path.dirname(resolved), `${path.basename(resolved)}-watermark.json`);
}
