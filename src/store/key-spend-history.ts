// Credits per key in the months that are over, for keys whose budget runs over their whole life
// (docs/decisions.md §10). A month that is over never changes (rows are stamped with the time they
// are written), so its per-key totals are read from its log once and kept in
// data/usage/key-totals.json; a start never rereads history for them.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "./atomic-write.js";

export type KeyTotals = Map<string, number>;

export class KeySpendHistory {
  private readonly months = new Map<string, KeyTotals>();
  private loaded = false;

  constructor(
    private readonly directory: string,
    /** Reads one month's log and sums it per key prefix. */
    private readonly sumMonth: (period: string) => KeyTotals,
  ) {}

  /** The totals of every month in `periods` (all before the current one), reading each at most once. */
  totals(periods: readonly string[]): KeyTotals[] {
    this.load();
    let added = false;
    const result: KeyTotals[] = [];
    for (const period of periods) {
      let month = this.months.get(period);
      if (!month) {
        month = this.sumMonth(period);
        this.months.set(period, month);
        added = true;
      }
      result.push(month);
    }
    if (added) this.save();
    return result;
  }

  private get file(): string {
    return path.join(this.directory, "key-totals.json");
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    if (!existsSync(this.file)) return;
    try {
      const saved = JSON.parse(readFileSync(this.file, "utf8")) as Record<string, Record<string, number>>;
      for (const [period, keys] of Object.entries(saved)) {
        const month = new Map<string, number>();
        for (const [prefix, credits] of Object.entries(keys)) if (Number.isSafeInteger(credits) && credits >= 0) month.set(prefix, credits);
        this.months.set(period, month);
      }
    } catch {
      // A damaged cache is only a cache: the months are read again from their logs.
      this.months.clear();
    }
  }

  private save(): void {
    const saved: Record<string, Record<string, number>> = {};
    for (const [period, keys] of this.months) saved[period] = Object.fromEntries(keys);
    writeFileAtomic(this.file, `${JSON.stringify(saved)}\n`);
  }
}
