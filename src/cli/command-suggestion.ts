// What a mistyped command most likely meant, for the command_not_found hook (names and flags:
// src/text/closest-name.ts).
import { closeEnough, editDistance } from "../text/closest-name.js";

/**
 * The known id (colon-separated, as oclif passes them) closest to what was typed, or undefined
 * when none is close enough to be a typo. Each id is compared with as many words of the typed id
 * as it has, so arguments after a command (`gw modles --json`, `gw storag ls FILE`) do not count.
 * An exact word match (a real topic such as `plans` in `plans lst`) is no typo fix.
 */
export function closestCommandId(typed: string, knownIds: readonly string[]): string | undefined {
  const words = typed.split(":");
  let best: { id: string; distance: number } | undefined;
  for (const id of knownIds) {
    const typedPart = words.slice(0, id.split(":").length).join(":");
    const distance = editDistance(typedPart.toLowerCase(), id);
    if (distance === 0 || !closeEnough(distance, id)) continue;
    if (!best || distance < best.distance) best = { id, distance };
  }
  return best?.id;
}
