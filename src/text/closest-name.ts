// What a mistyped name most likely meant: the closest known one within a few edits. The CLI's
// command and flag suggestions use it, and so does the check of a provider type, which the CLI
// and the admin API share (src/admin/config-edits/providers.ts).

/**
 * Edits between two strings (insert, delete, substitute, or swap two neighbours: the optimal
 * string alignment distance), so "modles" is one edit from "models", as a typist would count it.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The known name closest to what was typed (a flag, a provider type ...), or undefined when none is close enough to be a typo. */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(typed.toLowerCase(), name.toLowerCase());
    if (!closeEnough(distance, name)) continue;
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best?.name;
}

/** A typo is a few edits: one for a short name, a third of its length for a longer one. */
export function closeEnough(distance: number, name: string): boolean {
  return distance <= Math.max(1, Math.floor(name.length / 3));
}
