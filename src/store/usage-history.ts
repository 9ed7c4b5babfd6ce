// The usage history as reports read it (`gw usage`, `gw keys list`'s spend and last use), wherever
// the rows are: this home's usage log, or the streams of a Redis state shared by several
// instances (redis-usage-history.ts). Both judge rows by the gateway's own rules (usage-rows.ts)
// and hand them over in batches, never a month at once (docs/decisions.md §15, §21).
import { UsageLog, type UsageRow } from "./usage-log.js";
import { type UsageRange, type UsageSummary, usageLogSlices, usageRows, usageSummary } from "./usage-rows.js";

export interface UsageHistory {
  /** The months (YYYY-MM) that hold rows, oldest first. */
  periods(): Promise<string[]>;
  /** The rows of a range as they are now: rows written after this resolves are not in the reading. */
  reading(range: UsageRange): Promise<UsageReading>;
}

export interface UsageReading {
  /**
   * The valid rows whose time lies in the range, in batches, month by month in the order they
   * were written. `onSkipped` gets a message naming where each invalid row that may lie in the
   * range is. Read again, the same rows. Throws StoreError at a row that is not JSON.
   */
  rows(onSkipped?: (warning: string) => void): AsyncIterable<UsageRow[]>;
  /**
   * For a range that is one whole month of this home's log, with a checkpoint that fits it: the
   * month's sums per agent as of the checkpoint and the rows after it (usage-rows.ts). Undefined
   * when there is none (then the rows are read); a Redis state has none.
   */
  summary?(onSkipped?: (warning: string) => void): UsageSummary | undefined;
}

/** This home's usage log files, each read up to its size when the reading began. */
export class EmbeddedUsageHistory implements UsageHistory {
  constructor(private readonly directory: string) {}

  async periods(): Promise<string[]> {
    return UsageLog.periods(this.directory);
  }

  async reading(range: UsageRange): Promise<UsageReading> {
    const slices = usageLogSlices(this.directory, range);
    return {
      rows: (onSkipped) => usageRows(slices, range, onSkipped),
      summary: (onSkipped) => usageSummary(this.directory, slices, range, onSkipped),
    };
  }
}
